-- Claims a match under every identity it has, in one atomic step: the claim rule stated in
-- src/claim/rule.rs (marker; then the first lookup that finds a live claim holding the match,
-- a claim found through anything but our own source ids holding it only when no rival names
-- it and its facts agree with ours; else ours is written), which tests/it/rule.rs checks this
-- script against. The facts are compared as src/cricket/facts.rs compares them.
-- KEYS[1] = our record key (<prefix>match:<key>); KEYS[2] = the first-start marker's key;
-- KEYS[3 .. 2+n] = the lookups, in order (n = ARGV[4]); then ARGV[9] pointer keys of ours;
-- then ARGV[10] pointer keys of our rivals; then our fixture's list key (when ARGV[12] = '1');
-- then the record key beside ours (when ARGV[13] is not empty); then, last, the deployment's
-- index of unsettled claims (a sorted set, src/claim/unsettled.rs).
-- ARGV[1] = our record; ARGV[2] = TTL in seconds; ARGV[3] = '1' when the marker must exist;
-- ARGV[4] = n; ARGV[5] = one letter per lookup: 'r' a record key (compared), 'b' the record
-- key beside ours (held at once), 's' a source id's pointer key (held at once), 'k' a key
-- identity's pointer key (compared), 'f' a fixture's list key (compared); a pointer's value is
-- a key without <prefix>match:; ARGV[6] = <prefix>match:; ARGV[7] = our key (the value of our
-- pointers); ARGV[8] = the pointer of our own key, not written when our record is stored under
-- that key (the record answers for it); empty when the match has no key identity; ARGV[11] =
-- our facts ('' for none); ARGV[13] = the match key beside ours; ARGV[14] = <prefix>id:fixture:
-- (what a key's fixture's list key starts with); ARGV[15..18] = the tolerances CLOSE, DAY,
-- EAST, WEST of src/cricket/facts.rs, in seconds; ARGV[19] = when our record is due for a
-- reconciliation (Unix milliseconds: its owner's deadline), its score in the index ('' when it
-- is settled, and not in the index).
-- A fixture's list holds one line per claim: '<match key> <facts>'.
-- Returns {'won', 0 under our key or 1 beside it}, {'nomarker'}, or {'held', lookup index
-- (1-based), the holder's key (without <prefix>match:), holder record, the facts listed for it
-- that agreed with ours or nil}.
-- Keys named by values (a pointer's, a list's) are built here from ARGV[6] and ARGV[14]: one
-- Redis (or one Cluster slot: the prefix is a hash tag there) holds them all.
local ttl, n, kinds, mprefix = tonumber(ARGV[2]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
local ours, own = ARGV[7], ARGV[8]
local np, nr = tonumber(ARGV[9]), tonumber(ARGV[10])
local CLOSE, DAY, EAST, WEST = tonumber(ARGV[15]), tonumber(ARGV[16]), tonumber(ARGV[17]), tonumber(ARGV[18])
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

-- Facts as stored: 'name=value' pairs joined by ';'.
local function parse(s)
  local f = {}
  for k, v in string.gmatch(s, '(%a+)=([^;]+)') do
    f[k] = v
  end
  return f
end
local our_text = ARGV[11]
local our_facts = nil
if our_text ~= '' then
  our_facts = parse(our_text)
end
-- Two starts, as src/cricket/facts.rs's Start::agrees: `wide` more when named alike.
local function starts(a, b, wide)
  local at, bt, ad, bd = tonumber(a.t), tonumber(b.t), tonumber(a.d), tonumber(b.d)
  if not (at or ad) or not (bt or bd) then
    return true
  end
  if at and bt then
    return math.abs(at - bt) <= CLOSE + wide
  end
  if at or bt then
    local t, day = at, bd
    if not at then
      t, day = bt, ad
    end
    return t >= day - EAST - wide and t < day + DAY + WEST + wide
  end
  return math.abs(ad - bd) <= wide
end
local function agree(a, b)
  for _, k in ipairs({'f', 'n', 's', 'sn', 'r', 'g', 'p'}) do
    if a[k] and b[k] and a[k] ~= b[k] then
      return false
    end
  end
  local alike = (a.n and a.n == b.n) or (a.p and a.p == b.p) or (a.s and a.s == b.s)
  local wide = 0
  if alike then
    wide = DAY
  end
  return starts(a, b, wide)
end

-- A fixture's list, as {key, facts} entries in order.
local function entries(v)
  local out = {}
  if not v then
    return out
  end
  for line in string.gmatch(v, '[^\n]+') do
    local k, f = string.match(line, '^([^ ]+) ?(.*)$')
    if k then
      out[#out + 1] = {k, f}
    end
  end
  return out
end
-- The list key of a match key's fixture (its date, '_', its teams), or nil without a date.
local function list_of(key)
  local date, teams = string.match(key, '^(%d%d%d%d%-%d%d%-%d%d)_([^_]*)')
  if not date then
    return nil
  end
  return ARGV[14] .. date .. '_' .. teams
end

local first_pointer = 3 + n
local first_rival = first_pointer + np
local after = first_rival + nr
-- The records our rivals lead to: other matches, never this one.
local excluded = {}
for j = first_rival, after - 1 do
  local v = get(KEYS[j])
  if v then
    excluded[v] = true
  end
end
local list_key, beside_key = nil, nil
if ARGV[12] == '1' then
  list_key = KEYS[after]
  after = after + 1
end
if ARGV[13] ~= '' then
  beside_key = KEYS[after]
end

-- Whether the record under `holder` holds the match, found by a lookup of `kind` (with the
-- facts its fixture's list gives it, `listed`, when found through a list); and the facts
-- that agreed.
local function holds(kind, holder, listed)
  if kind == 'b' or kind == 's' then
    return true, nil
  end
  if excluded[holder] then
    return false, nil
  end
  if not our_facts then
    return true, nil
  end
  if listed then
    if agree(our_facts, parse(listed)) then
      return true, listed
    end
    return false, nil
  end
  local lk = list_of(holder)
  if not lk then
    return true, nil
  end
  for _, e in ipairs(entries(get(lk))) do
    if e[1] == holder then
      if agree(our_facts, parse(e[2])) then
        return true, e[2]
      end
      return false, nil
    end
  end
  return true, nil
end

-- Facts `a` with every fact `b` states and `a` does not, as src/cricket/facts.rs's
-- Facts::merged (a timed start over a date-only one), written in Facts::to_stored's order.
local function merged(a_text, b_text)
  local a, b = parse(a_text), parse(b_text)
  if not a.t and b.t then
    a.t, a.d = b.t, nil
  end
  if not a.t and not a.d then
    a.d = b.d
  end
  local out = {}
  for _, k in ipairs({'t', 'd', 'f', 'n', 's', 'sn', 'r', 'g', 'p'}) do
    local v = a[k]
    if v == nil and k ~= 't' and k ~= 'd' then
      v = b[k]
    end
    if v then
      out[#out + 1] = k .. '=' .. v
    end
  end
  return table.concat(out, ';')
end

-- The list text `current` without the entries whose record no longer lives, listing `key`
-- with our facts: merged into its entry when it has one, else last.
local function relisted(current, key)
  local kept, found = {}, false
  for _, e in ipairs(entries(current)) do
    if get(mprefix .. e[1]) then
      local f = e[2]
      if e[1] == key then
        f, found = merged(f, our_text), true
      end
      kept[#kept + 1] = e[1] .. ' ' .. f
    end
  end
  if not found then
    kept[#kept + 1] = key .. ' ' .. our_text
  end
  return table.concat(kept, '\n')
end

-- The writes once `target` holds the match, and the answer.
local function held(i, target, rec, agreed)
  for j = first_pointer, first_rival - 1 do
    local cur = get(KEYS[j])
    -- Absent, or naming a claim that is gone: ours to point at the holder. One naming another
    -- live claim is that claim's, and left alone. Our own key's pointer is not needed when the
    -- holder is stored under that very key (a race lost).
    local needed = KEYS[j] ~= own or target ~= ours
    if needed and ((not cur) or (cur ~= target and not get(mprefix .. cur))) then
      redis.call('SET', KEYS[j], target, 'EX', ttl)
    end
  end
  if list_key and our_facts then
    local current = get(list_key) or ''
    local list = relisted(current, target)
    if list ~= current then
      redis.call('SET', list_key, list, 'EX', ttl)
    end
  end
  return {'held', i, target, rec, agreed or false}
end

for i = 1, n do
  local kind, k = string.sub(kinds, i, i), KEYS[2 + i]
  if kind == 'f' then
    for _, e in ipairs(entries(get(k))) do
      local rec = get(mprefix .. e[1])
      if rec then
        local ok, agreed = holds(kind, e[1], e[2])
        if ok then
          return held(i, e[1], rec, agreed)
        end
      end
    end
  else
    local target, rec = nil, nil
    if kind == 'r' or kind == 'b' then
      target, rec = string.sub(k, #mprefix + 1), get(k)
    else
      target = get(k)
      if target then
        rec = get(mprefix .. target)
      end
    end
    if rec then
      local ok, agreed = holds(kind, target, nil)
      if ok then
        return held(i, target, rec, agreed)
      end
    end
  end
end

-- Won: under our key, or beside it when a record (another match) lives under ours.
local target_key, target, beside = KEYS[1], ours, 0
local there = get(KEYS[1])
if there then
  if not beside_key then
    return held(1, ours, there, nil)
  end
  target_key, target, beside = beside_key, ARGV[13], 1
end
if list_key and our_facts then
  redis.call('SET', list_key, relisted(get(list_key) or '', target), 'EX', ttl)
end
for j = first_pointer, first_rival - 1 do
  if KEYS[j] ~= own or target ~= ours then
    local cur = get(KEYS[j])
    -- Absent, or naming a claim that is gone; one naming a live claim is another match's.
    if (not cur) or not get(mprefix .. cur) then
      redis.call('SET', KEYS[j], target, 'EX', ttl)
    end
  end
end
redis.call('SET', target_key, ARGV[1], 'EX', ttl)
-- In the same step as the record: no claim is ever unsettled without being in the index.
if ARGV[19] ~= '' then
  redis.call('ZADD', KEYS[#KEYS], ARGV[19], target_key)
end
return {'won', beside}
