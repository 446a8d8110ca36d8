-- Group bookkeeping. Invariant: a group with jobs is in exactly one of
--   ready  (its head member, scored by the head's orderMs): idle, waiting to be reserved;
--   active (by the id of its one leased job);
--   held   (by group name, scored by the release time; +inf = paused and parked).
-- The leased or held job stays in the group zset, so a group is never seen as empty while busy.
--
-- Changes to `ready` (and job deletions) are gathered in a batch B and written by flushBatch in
-- one command each, so a script that touches many jobs pays per call, not per job. Entries
-- waiting in B are looked at before `ready` itself, so later steps of the same script see them.

local function newBatch()
  return { ready = {}, minOrder = {}, fresh = {}, delayed = {}, deleted = {}, timer = nil }
end

-- Lowers the batch's timer (see noteTimer) to `at`.
local function batchTimer(B, at)
  if not B.timer or at < B.timer then B.timer = at end
end

-- Writes what the batch gathered, one command per key: new job records (HSET), delayed jobs,
-- `ready` (ZADD LT: a member keeps its score, the ~timers marker only moves earlier) and
-- deleted records (HDEL). K needs jobs, ready and, when jobs were delayed, delayed.
local function flushBatch(K, B)
  if #B.fresh > 0 then redis.call('HSET', K.jobs, unpack(B.fresh)) end
  if #B.delayed > 0 then redis.call('ZADD', K.delayed, unpack(B.delayed)) end
  local args = {}
  for _, entry in pairs(B.ready) do
    args[#args + 1] = entry[1]
    args[#args + 1] = entry[2]
  end
  if B.timer then
    args[#args + 1] = B.timer
    args[#args + 1] = TIMERS
  end
  if #args > 0 then redis.call('ZADD', K.ready, 'LT', unpack(args)) end
  if #B.deleted > 0 then redis.call('HDEL', K.jobs, unpack(B.deleted)) end
  B.ready, B.minOrder, B.fresh, B.delayed, B.deleted, B.timer = {}, {}, {}, {}, {}, nil
end

-- Takes member `m` out of `ready` (pending or written); true if it was the group's entry there.
-- A pending entry replaced the written one, so when one is pending `ready` holds nothing else.
local function takeReady(B, readyKey, groupKey, m)
  local pending = B.ready[groupKey]
  if pending then
    if pending[2] ~= m then return false end
    B.ready[groupKey] = nil
    return true
  end
  return redis.call('ZREM', readyKey, m) == 1
end

-- Adds member `m` with score `orderMs` to its group and keeps `ready` pointing at the head.
local function addToGroup(B, readyKey, groupKey, orderMs, m)
  redis.call('ZADD', groupKey, orderMs, m)
  -- A job this batch already added sorts before ours: ours is not the head, nothing to check.
  -- (Members start with the 15-digit sequence, so comparing those digits orders equal orderMs.)
  local seq = string.sub(m, 1, 15)
  local earliest = B.minOrder[groupKey]
  if earliest and (earliest[1] < orderMs or (earliest[1] == orderMs and earliest[2] < seq)) then return end
  B.minOrder[groupKey] = { orderMs, seq }
  local head = redis.call('ZRANGE', groupKey, 0, 1, 'WITHSCORES')
  if head[1] ~= m then return end
  if head[3] == nil or takeReady(B, readyKey, groupKey, head[3]) then
    B.ready[groupKey] = { orderMs, m } -- idle group: new, or with an earlier head now
  end -- else the group is active, held or parked: it moves on when that ends
end

-- Offers the group's current head to `ready` (after its lease or hold ended).
local function advanceGroup(B, groupKey)
  local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
  if head[1] then B.ready[groupKey] = { head[2], head[1] } end
end

-- Removes a waiting job's member from its group; if it was the idle head, the next one takes
-- its place in `ready`.
local function removeFromGroup(B, readyKey, groupKey, m)
  redis.call('ZREM', groupKey, m)
  if takeReady(B, readyKey, groupKey, m) then advanceGroup(B, groupKey) end
end
