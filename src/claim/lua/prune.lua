-- Takes out of the deployment's index of unsettled claims (src/claim/unsettled.rs) the claims
-- a reconciliation found settled or gone, judged again here, in one atomic step: a claim
-- written again since it was read (claimed anew, or made unknown) stays.
-- KEYS[1] = the index; KEYS[2 ..] = the claims' keys (members of the index).
-- Returns how many left the index.
local removed = 0
for i = 2, #KEYS do
  local v = redis.pcall('GET', KEYS[i])
  local keep = false
  if type(v) == 'string' then
    local ok, rec = pcall(cjson.decode, v)
    keep = ok and type(rec) == 'table' and (rec['state'] == 'claimed' or rec['state'] == 'unknown')
  end
  if not keep then
    removed = removed + redis.call('ZREM', KEYS[1], KEYS[i])
  end
end
return removed
