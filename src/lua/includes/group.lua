-- Group bookkeeping. Invariant: a group with jobs is in exactly one of
--   ready  (its head member, scored by the head's orderMs): idle, waiting to be reserved;
--   active (by the id of its one leased job);
--   held   (by group name, scored by the release time; +inf = paused and parked).
-- The leased or held job stays in the group zset, so a group is never seen as empty while busy.

-- Adds member `m` with score `orderMs` to its group and keeps `ready` pointing at the head.
local function addToGroup(groupKey, readyKey, orderMs, m)
  redis.call('ZADD', groupKey, orderMs, m)
  local head = redis.call('ZRANGE', groupKey, 0, 1, 'WITHSCORES')
  if head[1] ~= m then return end
  if head[3] == nil then
    redis.call('ZADD', readyKey, orderMs, m) -- the group was empty: it is idle now
  elseif redis.call('ZREM', readyKey, head[3]) == 1 then
    redis.call('ZADD', readyKey, orderMs, m) -- an idle group got an earlier head
  end -- else the group is active, held or parked: it moves on when that ends
end

-- Offers the group's current head to `ready` (after its lease or hold ended).
local function advanceGroup(groupKey, readyKey)
  local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
  if head[1] then redis.call('ZADD', readyKey, head[2], head[1]) end
end

-- Removes a waiting job's member from its group; if it was the idle head, the next one takes
-- its place in `ready`.
local function removeFromGroup(groupKey, readyKey, m)
  redis.call('ZREM', groupKey, m)
  if redis.call('ZREM', readyKey, m) == 1 then advanceGroup(groupKey, readyKey) end
end
