-- Says in the deployment's first-start marker that the index of unsettled claims holds the
-- claims written before it existed (src/claim/unsettled.rs), keeping the marker's TTL. A marker
-- that is gone (a store that lost its data) or unreadable is left as it is.
-- KEYS[1] = the first-start marker (<root>store:initialised).
-- Returns 1 when the marker says so now, 0 otherwise.
local v = redis.call('GET', KEYS[1])
if not v then
  return 0
end
local ok, marker = pcall(cjson.decode, v)
if not ok or type(marker) ~= 'table' then
  return 0
end
marker['unsettled_indexed'] = true
redis.call('SET', KEYS[1], cjson.encode(marker), 'KEEPTTL')
return 1
