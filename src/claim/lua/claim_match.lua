-- Claims a match under every identity it has, in one atomic step: the claim rule stated in
-- src/claim/rule.rs (marker, then the first lookup that finds a live claim holds the match,
-- else ours is written), which tests/it/rule.rs checks this script against.
-- KEYS[1] = our record key (<prefix>match:<key>); KEYS[2] = the first-start marker's key;
-- KEYS[3 .. 2+n] = the lookups, in order (n = ARGV[4]); the rest = our identity pointer keys.
-- ARGV[1] = our record; ARGV[2] = TTL in seconds; ARGV[3] = '1' when the marker must exist;
-- ARGV[4] = n; ARGV[5] = one letter per lookup: 'r' a record key, 'p' a pointer key (its value
-- is a key without <prefix>match:); ARGV[6] = <prefix>match:; ARGV[7] = our key (the value of
-- our pointers); ARGV[8] = the pointer of our own key, not written when we win (our record
-- under that key answers for it); empty when the match has no key identity.
-- Returns {'won'}, {'nomarker'}, or {'held', lookup index (1-based), the holder's key (without
-- <prefix>match:), holder record}.
-- Pointer values name keys built here from ARGV[6]: one Redis (not a Cluster) holds them all.
local ttl, n, kinds, mprefix = tonumber(ARGV[2]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[2]) == 0 then
  return {'nomarker'}
end
-- A key of another type (not written by this bot) is held, never free: it reads as a value.
local function get(k)
  local v = redis.pcall('GET', k)
  if type(v) == 'table' and v.err then
    return '(a Redis value that is not a string)'
  end
  return v
end
local held_key, held_val, via
for i = 1, n do
  local k = KEYS[2 + i]
  local v = get(k)
  if v then
    if string.sub(kinds, i, i) == 'r' then
      held_key, held_val, via = k, v, i
      break
    end
    local target = mprefix .. v
    local rec = get(target)
    if rec then
      held_key, held_val, via = target, rec, i
      break
    end
  end
end
local first_pointer = 3 + n
if held_key then
  local target = string.sub(held_key, #mprefix + 1)
  for j = first_pointer, #KEYS do
    local cur = get(KEYS[j])
    -- Absent, or naming a claim that is gone: ours to point at the holder. One naming another
    -- live claim is that claim's, and left alone. Our own key's pointer is not needed when the
    -- holder is stored under that very key (a race lost).
    local needed = KEYS[j] ~= ARGV[8] or target ~= ARGV[7]
    if needed and ((not cur) or (cur ~= target and not get(mprefix .. cur))) then
      redis.call('SET', KEYS[j], target, 'EX', ttl)
    end
  end
  return {'held', via, target, held_val}
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
for j = first_pointer, #KEYS do
  if KEYS[j] ~= ARGV[8] then
    redis.call('SET', KEYS[j], ARGV[7], 'EX', ttl)
  end
end
return {'won'}
