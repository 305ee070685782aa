-- Compare-and-delete on the claim token: never a plain DEL, because by the time we release,
-- the claim may have expired and been taken by another worker. Inside a window of the
-- store's own clock (TIME, read here, in the step that judges it), as transition.lua.
-- KEYS[1] = claim key; ARGV[1] = our token; ARGV[2], ARGV[3] = the window's first allowed
-- time and the time it closes, Unix microseconds, '' for unbounded; ARGV[4] = the time to
-- judge by instead of TIME ('' for TIME: only a test's simulated clock sets it); KEYS[2] = the
-- deployment's index of unsettled claims (src/claim/unsettled.rs), which the claim leaves.
-- Returns {1, old} when deleted, {0, current} when the record is someone else's,
-- {-1, ''} when the key no longer exists, {2, current} when the store's time is outside the
-- window.
local cur = redis.call('GET', KEYS[1])
if not cur then
  return {-1, ''}
end
local ok, rec = pcall(cjson.decode, cur)
if not ok or type(rec) ~= 'table' or rec['token'] ~= ARGV[1] then
  return {0, cur}
end
local from, to = tonumber(ARGV[2] or ''), tonumber(ARGV[3] or '')
if from or to then
  local now = tonumber(ARGV[4] or '')
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  if (from and now < from) or (to and now >= to) then
    return {2, cur}
  end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
return {1, cur}
