-- Compare-and-set on the claim token, keeping the key's TTL.
-- KEYS[1] = claim key; ARGV[1] = our token; ARGV[2] = the new record (JSON).
-- Returns {1, old} when applied, {0, current} when the record is someone else's,
-- {-1, ''} when the key no longer exists (expired or released).
local cur = redis.call('GET', KEYS[1])
if not cur then
  return {-1, ''}
end
local ok, rec = pcall(cjson.decode, cur)
if not ok or type(rec) ~= 'table' or rec['token'] ~= ARGV[1] then
  return {0, cur}
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return {1, cur}
