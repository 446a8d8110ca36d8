-- Group bookkeeping. Needs job.lua and meta.lua. Invariant: a group with jobs is in exactly one of
--   ready  (its head member, scored by the head's orderMs): idle, waiting to be reserved;
--   active (its one leased job);
--   held   (by group name, scored by the release time; +inf = paused and parked).
-- The group zset holds the group's waiting jobs and its leased one, except a job leased "solo":
-- enqueued to an empty group and leased in the same call, it never enters the zset (meta's
-- 'g:<group>' count still includes it). So a group whose count exceeds what its zset holds has
-- a solo lease, and is busy.
--
-- Changes to `ready`, new and deleted records are gathered in a batch B and written by
-- flushBatch in one command each, so a script that touches many jobs pays per call, not per
-- job. Entries waiting in B are looked at before `ready` itself, so later steps of the same
-- script see them.

-- @include outcome

-- B.reserving: the caller reserves right after (it drains what became ready); otherwise a head
-- that is due now is a timer due now, so the scheduler drains it.
local function newBatch(M, now)
  return { M = M, now = now, reserving = false, ready = {}, minOrder = {}, fresh = {}, delayed = {}, deleted = {} }
end

-- Writes what the batch gathered, one command per key, and keeps meta's `ready` count. A head
-- that may not start yet (a future orderMs, or inside the ordering window) is a timer: the queue
-- must be drained when it comes due. K needs jobs, ready, when jobs were delayed delayed, and
-- when a job with a callback URL ended outcomes and outcomeRecords (outcome.lua).
local function flushBatch(K, B)
  if #B.fresh > 0 then redis.call('HSET', K.jobs, unpack(B.fresh)) end
  if #B.delayed > 0 then redis.call('ZADD', K.delayed, unpack(B.delayed)) end
  local args = {}
  local window = B.M.cfg.orderingWindowMs
  for _, entry in pairs(B.ready) do
    args[#args + 1] = entry[1]
    args[#args + 1] = entry[2]
    local dueAt = tonumber(entry[1]) + window
    if dueAt > B.now then
      noteTimer(B.M, dueAt)
    elseif not B.reserving then
      noteTimer(B.M, B.now)
    end
  end
  if #args > 0 then metaAdd(B.M, 'ready', redis.call('ZADD', K.ready, unpack(args))) end
  if #B.deleted > 0 then redis.call('HDEL', K.jobs, unpack(B.deleted)) end
  if B.outcomes then writeOutcomes(K, B) end -- jobs with a callback URL ended (finish.lua)
  B.ready, B.minOrder, B.fresh, B.delayed, B.deleted = {}, {}, {}, {}, {}
end

-- Takes member `m` out of `ready` (pending or written); true if it was the group's entry there.
-- A pending entry replaced the written one, so when one is pending `ready` holds nothing else.
local function takeReady(K, B, groupKey, m)
  local pending = B.ready[groupKey]
  if pending then
    if pending[2] ~= m then return false end
    B.ready[groupKey] = nil
    return true
  end
  if redis.call('ZREM', K.ready, m) == 0 then return false end
  metaAdd(B.M, 'ready', -1)
  return true
end

-- Adds waiting job `m` (score `orderMs`) to its group and keeps `ready` pointing at the head.
local function addToGroup(K, B, groupKey, group, orderMs, m)
  local before = groupJobs(B.M, group)
  addGroupJobs(B.M, group, 1)
  redis.call('ZADD', groupKey, orderMs, m)
  local seq = string.sub(m, 1, 15)
  if before == 0 then -- an empty group: its only job is its head, and it is idle
    B.minOrder[groupKey] = { orderMs, seq }
    B.ready[groupKey] = { orderMs, m }
    return
  end
  -- A job this batch already added sorts before ours: ours is not the head, nothing to check.
  -- (Members start with the 15-digit sequence, so comparing those digits orders equal orderMs.)
  local earliest = B.minOrder[groupKey]
  if earliest and (earliest[1] < orderMs or (earliest[1] == orderMs and earliest[2] < seq)) then return end
  B.minOrder[groupKey] = { orderMs, seq }
  local head = redis.call('ZRANGE', groupKey, 0, 1, 'WITHSCORES')
  if head[1] ~= m then return end
  -- Ours is the new head. Nothing behind it: the group's other job is a solo lease, busy.
  if head[3] ~= nil and takeReady(K, B, groupKey, head[3]) then
    B.ready[groupKey] = { orderMs, m } -- idle, with an earlier head now
  end -- else the group is active, held or parked: it moves on when that ends
end

-- Offers the group's current head to `ready` (after its lease or hold ended).
local function advanceGroup(B, groupKey)
  local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
  if head[1] then B.ready[groupKey] = { head[2], head[1] } end
end

-- Removes a waiting job's member from its group; if it was the idle head, the next one takes
-- its place in `ready`.
local function removeFromGroup(K, B, groupKey, group, m)
  redis.call('ZREM', groupKey, m)
  addGroupJobs(B.M, group, -1)
  if takeReady(K, B, groupKey, m) and groupJobs(B.M, group) > 0 then advanceGroup(B, groupKey) end
end
