-- Compare-and-swap on the whole value, keeping the TTL: used to add identities to another
-- worker's record without ever overwriting a state it recorded in between.
-- KEYS[1] = claim key; ARGV[1] = the value as read; ARGV[2] = the new value.
-- Returns 1 when replaced, 0 when the value had changed (or is gone).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
