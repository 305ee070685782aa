-- Compare-and-set on the claim token, keeping the key's TTL, inside a window of the store's
-- own clock (TIME, read here, in the step that judges it: one clock for every replica).
-- KEYS[1] = claim key; ARGV[1] = our token; ARGV[2] = the new record (JSON);
-- ARGV[3], ARGV[4] = the window's first allowed time and the time it closes, Unix
-- microseconds, '' for unbounded; ARGV[5] = the time to judge by instead of TIME ('' for
-- TIME: only a test's simulated clock sets it); KEYS[2] = the deployment's index of unsettled
-- claims (src/claim/unsettled.rs); ARGV[6] = when the new record is due for a reconciliation
-- (Unix milliseconds), its score there, or '' when it is settled (it leaves the index).
-- Returns {1, old} when applied, {0, current} when the record is someone else's,
-- {-1, ''} when the key no longer exists (expired or released), {2, current} when the
-- store's time is outside the window.
local cur = redis.call('GET', KEYS[1])
if not cur then
  return {-1, ''}
end
local ok, rec = pcall(cjson.decode, cur)
if not ok or type(rec) ~= 'table' or rec['token'] ~= ARGV[1] then
  return {0, cur}
end
local from, to = tonumber(ARGV[3] or ''), tonumber(ARGV[4] or '')
if from or to then
  local now = tonumber(ARGV[5] or '')
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  if (from and now < from) or (to and now >= to) then
    return {2, cur}
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[6] == '' then
  redis.call('ZREM', KEYS[2], KEYS[1])
else
  redis.call('ZADD', KEYS[2], ARGV[6], KEYS[1])
end
return {1, cur}
