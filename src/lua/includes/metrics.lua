-- Per-minute outcome counters for the dashboard's chart: how many attempts ended completed,
-- failed (for good) or retried, in each of the last 60 minutes. A script tallies the outcomes
-- of its whole call and writes them once at the end (writeTally), so a drain's batch of acks
-- pays one or two commands, not one per job. Needs nothing else.
--
-- The hash is a ring of 60 minutes: field '<kind>:<minute % 60>' (kind c completed, f failed,
-- r retried), value epoch minute * 1e8 + count. Carrying the minute in the value lets one
-- HINCRBY both add and tell whether the slot still held a minute an hour (or more) old, which
-- is then overwritten: fixed size, nothing to trim. Every value stays below 2^53, exact in
-- Lua's doubles (counts below 1e8 per minute, minutes below 9e7, i.e. until the year 2141).

local MINUTE_MS = 60000
local COUNT_SPAN = 100000000 -- a minute's count lives below this; the minute sits above it
-- Outcomes as completeJob/failJob name them ('waiting': retry pending), in a fixed order.
local TALLIED = { { 'completed', 'c' }, { 'failed', 'f' }, { 'waiting', 'r' } }

local function newTally()
  return { completed = 0, failed = 0, waiting = 0 }
end

-- Counts one attempt's outcome; anything else (LEASE_LOST) is not an ended attempt.
local function countOutcome(T, outcome)
  if T[outcome] then T[outcome] = T[outcome] + 1 end
end

local function encodeCount(base, count)
  return string.format('%.0f', base + count)
end

-- Adds the tally to the current minute's slots: nothing when nothing was counted; one HINCRBY
-- for a single kind (plus an HSET when its slot held an older minute); HMGET + HSET for more.
local function writeTally(key, T, now)
  local minute = math.floor(now / MINUTE_MS)
  local base, slot = minute * COUNT_SPAN, minute % 60
  local fields, counts = {}, {}
  for _, kind in ipairs(TALLIED) do
    if T[kind[1]] > 0 then
      fields[#fields + 1] = kind[2] .. ':' .. slot
      counts[#counts + 1] = T[kind[1]]
    end
  end
  if #fields == 0 then return end
  if #fields == 1 then
    local before = redis.call('HINCRBY', key, fields[1], counts[1]) - counts[1]
    if before < base then redis.call('HSET', key, fields[1], encodeCount(base, counts[1])) end
    return
  end
  local old = redis.call('HMGET', key, unpack(fields))
  local args = {}
  for i, field in ipairs(fields) do
    local value = tonumber(old[i]) or 0
    if value < base then value = base end -- empty, or an hour old or more: start this minute
    args[#args + 1] = field
    args[#args + 1] = encodeCount(value, counts[i])
  end
  redis.call('HSET', key, unpack(args))
end
