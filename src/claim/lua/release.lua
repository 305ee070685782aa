-- Compare-and-delete on the claim token: never a plain DEL, because by the time we release,
-- the claim may have expired and been taken by another worker.
-- KEYS[1] = claim key; ARGV[1] = our token.
-- Returns {1, old} when deleted, {0, current} when the record is someone else's,
-- {-1, ''} when the key no longer exists.
local cur = redis.call('GET', KEYS[1])
if not cur then
  return {-1, ''}
end
local ok, rec = pcall(cjson.decode, cur)
if not ok or type(rec) ~= 'table' or rec['token'] ~= ARGV[1] then
  return {0, cur}
end
redis.call('DEL', KEYS[1])
return {1, cur}
