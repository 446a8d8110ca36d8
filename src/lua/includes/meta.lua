-- The queue's `meta` hash: its config and every counter the scripts keep, read with one HMGET
-- at the start of a call and written with one HSET (and one HDEL) at its end, so counters cost
-- no command of their own. Fields:
--   config (JSON), secret (lease tokens derive from it), paused ('1'), pausedGroups (how many
--   groups are paused), deleting ('1'),
--   seq (the last enqueue sequence), active (leases: the size of `active`), ready (the size of
--   `ready`), timer (the earliest time the queue needs a tick, as told to the due index),
--   'g:<group>' (the group's waiting and active jobs; absent: none),
--   outcomes ('1' while outcome callbacks may be pending, outcome.lua),
--   'l:<group>' / 'f:<group>' (a group's runtime limits and flow state, flow.lua), 'b:<group>'
--   (the jobs behind its idle head, or how many of its batch are out: batch.lua), flows (how
--   many groups have flow state), prio ('1' once a job with a priority other than 0 joined a
--   group), hold (the queue's dispatch waits until then: a full rate window, a 429 with
--   backpressure "queue"), rs (starts since the queue rate limit's log was trimmed, reserve.lua),
--   dedup and dedupTrimAt (the ids the dedup window remembers, and their next trim: dedup.lua),
--   'm:<c|f|r>:<minute % 60>' (per-minute counters, see writeTally),
--   live (jobs that have not ended: waiting, delayed, active; quota.lua), bytes and pub (the
--   data of the waiting and delayed jobs, and how many of them a publish token sent, told by
--   their `pub:` ids: maxBytes and publishMaxJobs, bytes.lua),
--   partitions (a partitioned queue's root only: its count; errors.lua refuseRoot),
--   move (a move to another database: 'to <d>' under way, 'at <d>' done; errors.lua refuseMoving),
--   expiring ('1' once a job with a ttlMs was enqueued: the tick reads `expiring`, expiry.lua),
--   ev (events wanted until, epoch ms: until then scripts return the job events they cause,
--   events.lua; set by want-events.lua), es (the partition's event sequence, '<epoch> <last>':
--   see placeEvents),
--   'n:<kind>' and 'h:<w|r>' (lifetime counters and histograms for /metrics, totals.lua).
-- Namespaces: a field built from a user's string (a group name) is '<g|l|f|b>:<string>'; every
-- other field is groupq's own and never starts with 'g:', 'l:', 'f:' or 'b:', so no name can
-- collide with it. (Until issue 16 the counters were '<c|f|r>:<slot>': group "0".."59" read a counter
-- as its flow state. flow.lua treats such a leftover as absent and deletes it; get-minutes
-- still reads the old ring for the hour it covers.)
-- A script names, up front, the group and counter fields it will touch (openMeta's `extra`);
-- one it did not name is read on first use, correct but one command more.

-- @include errors
-- @include job

local BASE_FIELDS = {
  'config', 'secret', 'paused', 'pausedGroups', 'seq', 'active', 'ready', 'timer', 'outcomes', 'prio', 'hold', 'flows', 'rs',
  'dedup', 'dedupTrimAt', 'live', 'pub', 'bytes', 'partitions', 'move', 'expiring', 'ev', 'es', 'resultTrimAt',
  -- totals.lua: read by every call, so that any call may count at no command of its own.
  'n:a', 'n:c', 'n:f', 'n:r', 'n:x', 'n:e', 'n:t', 'n:os', 'n:of', 'n:oa', 'h:w', 'h:r',
}

-- A timer overdue by this much was told to the due index and still not run: its index entry
-- may have been lost (a Worker cut off between a script and its index update), so it is
-- reported again.
local TIMER_STALE_MS = 60000

-- `root`: the caller may run on a partitioned queue's root (put-queue); others are refused there.
local function openMeta(key, extra, root)
  local fields = {}
  for i, f in ipairs(BASE_FIELDS) do fields[i] = f end
  for _, f in ipairs(extra or {}) do
    fields[#fields + 1] = f
    -- A group's limits, flow state (flow.lua) and batch (batch.lua) come with its job count.
    if string.sub(f, 1, 2) == 'g:' then
      fields[#fields + 1] = 'l:' .. string.sub(f, 3)
      fields[#fields + 1] = 'f:' .. string.sub(f, 3)
      fields[#fields + 1] = 'b:' .. string.sub(f, 3)
    end
  end
  local values = redis.call('HMGET', key, unpack(fields))
  local M = { key = key, v = {}, changed = {}, lowered = nil }
  for i, f in ipairs(fields) do M.v[f] = values[i] or false end
  if not root then refuseRoot(M.v.partitions) end
  refuseMoving(M.v.move)
  if M.v.config then M.cfg = cjson.decode(M.v.config) end
  return M
end

local function metaGet(M, field)
  local value = M.v[field]
  if value == nil then
    value = redis.call('HGET', M.key, field) or false
    M.v[field] = value
  end
  return value
end

local function metaNum(M, field)
  return tonumber(metaGet(M, field)) or 0
end

-- Sets a field; false deletes it. An unchanged value costs no write.
local function metaSet(M, field, value)
  if M.v[field] == value then return end
  M.v[field] = value
  M.changed[field] = true
end

local function metaAdd(M, field, delta)
  if delta ~= 0 then metaSet(M, field, int(metaNum(M, field) + delta)) end
end

local function groupField(group)
  return 'g:' .. group
end

-- The group's waiting and active jobs (delayed ones are not in their group yet).
local function groupJobs(M, group)
  return metaNum(M, groupField(group))
end

local function addGroupJobs(M, group, delta)
  local n = groupJobs(M, group) + delta
  metaSet(M, groupField(group), n > 0 and int(n) or false)
end

-- A new timer at `at` (a delay, a backoff, a lease deadline, a repeat): when it is the queue's
-- earliest, the caller must lower the queue's entry in the due index (see dueReport).
local function noteTimer(M, at)
  local current = tonumber(M.v.timer)
  if not current or at < current then
    metaSet(M, 'timer', int(at))
    if not M.lowered or at < M.lowered then M.lowered = at end
  end
end

-- What the caller tells the due index: the timer this call lowered, or a stale one again; -1
-- for nothing.
local function dueReport(M, now)
  if M.lowered then return M.lowered end
  local current = tonumber(M.v.timer)
  if current and current < now - TIMER_STALE_MS then return current end
  return -1
end

-- The current lease token of job `id` (job.lua).
local function leaseToken(M, id, state)
  return tokenFor(M.v.secret, id, state)
end

-- The 32 hex digits behind a job's `webhook-id` (docs/delivery.md#deduplicating): the same on
-- every attempt of the job, and never the same for two jobs: the queue's secret is new with
-- each queue, meta's key names the partition, and the enqueue sequence is new for a reused id.
-- `extra` tells apart the messages of one job that are not resends (an outcome per end).
local function messageIdFor(M, id, state, extra)
  return string.sub(redis.sha1hex(M.v.secret .. '\0' .. M.key .. '\0' .. id .. '\0' .. state.s .. '\0' .. (extra or '')), 1, 32)
end

-- The job events of a call (events.lua) take their places in the partition's event sequence,
-- meta's `es` = '<epoch> <last>': `last` numbers the events told so far (1, 2, ...), `epoch` is
-- the script time of the first one, so that a queue deleted and made again (a new meta) starts a
-- sequence the hub (src/core/events/order.ts) tells from the old one. The hub puts each
-- partition's events in this order, whichever Worker hands them over and when.
-- The new `last` rides in the HSET of meta the call makes anyway (`writing`), so it costs no
-- command. A call that writes nothing to meta (progress, always) numbers none: its events are
-- told as following event `last`, the newest numbered, which places them exactly (the next
-- numbered event comes after them) except among themselves.
-- The list gets its place in front: {epoch (0: no sequence yet), last, numbered 0|1, events...}.
-- Returns whether `es` changed (the caller writes it).
local function placeEvents(M, writing)
  local list = M.events
  if not list or M.placed then return false end
  M.placed = true
  local epoch, last = string.match(M.v.es or '', '^(%d+) (%d+)$')
  epoch, last = tonumber(epoch), tonumber(last) or 0
  local numbered = #list > 0 and writing
  if numbered then
    epoch = epoch or M.eventsAt
    M.v.es = int(epoch) .. ' ' .. int(last + #list)
  end
  table.insert(list, 1, numbered and 1 or 0)
  table.insert(list, 1, last)
  table.insert(list, 1, epoch or 0)
  return numbered
end

local function saveMeta(M)
  local set, del = {}, {}
  for field in pairs(M.changed) do
    local value = M.v[field]
    if value then
      set[#set + 1] = field
      set[#set + 1] = value
    else
      del[#del + 1] = field
    end
  end
  if placeEvents(M, #set > 0) then
    set[#set + 1] = 'es'
    set[#set + 1] = M.v.es
  end
  if #set > 0 then redis.call('HSET', M.key, unpack(set)) end
  if #del > 0 then redis.call('HDEL', M.key, unpack(del)) end
  M.changed = {}
end

-- Per-minute counters of ended attempts for the dashboard's chart: how many attempts ended completed,
-- failed (for good) or retried, in each of the last 60 minutes. A ring of 60 minutes in meta:
-- field 'm:<kind>:<minute % 60>' (c completed, f failed, r retried), value epoch minute * 1e8 +
-- count. Carrying the minute in the value tells a slot that still holds a minute an hour (or
-- more) old, which is then overwritten: fixed size, nothing to trim. Every value stays below
-- 2^53, exact in Lua's doubles (counts below 1e8 per minute, minutes below 9e7).
local MINUTE_MS = 60000
local COUNT_SPAN = 100000000
-- Attempts' ends as completeJob/failJob name them ('waiting': retry pending), and their kinds.
local TALLIED = { { 'completed', 'c' }, { 'failed', 'f' }, { 'waiting', 'r' } }

-- The meta fields a call that ends attempts at `now` writes (for openMeta's `extra`).
local function tallyFields(now)
  local slot = math.floor(now / MINUTE_MS) % 60
  return { 'm:c:' .. slot, 'm:f:' .. slot, 'm:r:' .. slot }
end

local function newTally()
  return { completed = 0, failed = 0, waiting = 0 }
end

-- Counts how one attempt ended; anything else (LEASE_LOST) is not an ended attempt.
local function countEnd(T, ended)
  if T[ended] then T[ended] = T[ended] + 1 end
end

local function writeTally(M, T, now)
  local minute = math.floor(now / MINUTE_MS)
  local base, slot = minute * COUNT_SPAN, minute % 60
  for _, kind in ipairs(TALLIED) do
    local count = T[kind[1]]
    if count > 0 then
      local field = 'm:' .. kind[2] .. ':' .. slot
      local value = metaNum(M, field)
      if value < base then value = base end -- empty, or an hour old or more: start this minute
      metaSet(M, field, int(value + count))
    end
  end
end
