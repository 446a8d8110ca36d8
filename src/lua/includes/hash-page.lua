-- Pages of a hash walked with HSCAN, whose promise is: every field present for the whole walk
-- is returned at least once (a hash that shrinks can return some twice; the client's
-- `for await` skips what it already yielded).
--
-- HSCAN's COUNT is only a hint (a small hash comes back whole), so a page is often cut inside
-- a batch: the batch is taken in field order, and the cut keeps the batch's start, its end, the
-- last field shown and the COUNT it was read with. A scan cursor is a point in the space of hash
-- values, the same whatever the table's size, and a batch holds the fields hashed between its
-- start and its end. So a position (pos, stop, last, count) reads: walk on from `pos`; of the
-- stretch up to `stop`, the fields up to `last` were shown. The next page reads the stretch
-- again from `pos` (on until `stop`, should fields have come meanwhile) and shows its fields
-- after `last`; what a read brings from past `stop` (fields went) is told apart by an HSCAN from
-- `stop`, which then serves as the next batch.

-- @include order

local function hscan(key, pos, pattern, count)
  return redis.call('HSCAN', key, pos, 'MATCH', pattern, 'COUNT', count)
end

-- Whether batch end `a` comes before batch end `b` in the walk. Cursors step through hash
-- values with their bits reversed, so the lowest differing bit decides; '0' ends the walk.
local function endsBefore(a, b)
  if a == b or a == '0' then return false end
  if b == '0' then return true end
  local x, y = tonumber(a), tonumber(b)
  while x ~= y do
    if x % 2 ~= y % 2 then return x % 2 < y % 2 end
    x, y = math.floor(x / 2), math.floor(y / 2)
  end
  return false
end

-- HSCAN calls a page may make (and one more to find the end of a stretch).
local PAGE_SCANS = 6

-- The fields of the stretch from `pos` to `stop` after `last`, as {field, value} pairs; where
-- the reading got to (`stop` once the stretch was read whole, within `budget` calls); the HSCAN
-- reply from `stop`, when one was needed; and the calls made.
local function readStretch(key, pattern, count, pos, stop, last, budget)
  local entries, ends, calls = {}, pos, 0
  repeat
    local reply = hscan(key, ends, pattern, count)
    for _, x in ipairs(reply[2]) do entries[#entries + 1] = x end
    ends, calls = reply[1], calls + 1
  until calls == budget or not endsBefore(ends, stop)
  local beyond, past = nil, {}
  if endsBefore(stop, ends) then
    -- The last read went past `stop` with fewer than `count` fields before it, so one from
    -- `stop` reaches as far: it names the fields read that lie past the stretch.
    beyond, calls, ends = hscan(key, stop, pattern, count), calls + 1, stop
    for i = 1, #beyond[2], 2 do past[beyond[2][i]] = true end
  end
  local fields = {}
  for i = 1, #entries, 2 do
    if not past[entries[i]] and bytesBefore(last, entries[i]) then fields[#fields + 1] = { entries[i], entries[i + 1] } end
  end
  return fields, ends, beyond, calls
end

-- Up to `limit` items from the fields of `key` matching `pattern`, from the position
-- (pos, stop, last, count), the start being ('0', '', '', ''); `pick(field, value)` returns an
-- item, or nil to leave the field out. Returns the items and the next position: {} at the end
-- of the walk, else {pos} or {pos, stop, last, count}.
local function hashPage(key, pattern, limit, pos, stop, last, count, pick)
  local items, budget, ahead = {}, PAGE_SCANS, nil
  count = math.min(math.max(tonumber(count) or limit, 1), 1000)
  while budget > 0 do -- bounded work per page: a page may come back short, with a cursor
    local fields, ends, calls = {}, nil, 0
    if last ~= '' then
      fields, ends, ahead, calls = readStretch(key, pattern, count, pos, stop, last, budget)
    else
      if not ahead then ahead, count, calls = hscan(key, pos, pattern, limit), limit, 1 end
      for i = 1, #ahead[2], 2 do fields[#fields + 1] = { ahead[2][i], ahead[2][i + 1] } end
      ends, ahead = ahead[1], nil
    end
    budget = budget - calls
    local batch = {}
    for _, entry in ipairs(fields) do
      local item = pick(entry[1], entry[2])
      if item ~= nil then batch[#batch + 1] = { entry[1], item } end
    end
    table.sort(batch, function(a, b) return bytesBefore(a[1], b[1]) end)
    for j, entry in ipairs(batch) do
      -- (A stretch read in part forgets what was shown past `ends`: at worst that comes again.)
      if #items == limit then return items, { pos, ends, batch[j - 1][1], count } end
      items[#items + 1] = entry[2]
    end
    pos = ends
    if not (last ~= '' and endsBefore(pos, stop)) then last = '' end
    if pos == '0' then return items, {} end
    if #items == limit then break end
  end
  if last == '' then return items, { pos } end
  return items, { pos, stop, last, count }
end
