-- Moving waiting and delayed jobs by hand. Needs job.lua and group.lua; K needs jobs, ready,
-- held, delayed, prefix; B is a batch (group.lua) the script flushes.

-- Takes a waiting job out of its group. When it was the head a retry backoff held the group
-- for, the group is released at once (the hold was for that job); a group left empty leaves
-- `held` too, so no group is counted or listed without jobs. A paused group stays parked.
local function detachWaiting(K, B, id, state)
  local groupKey = groupKeyOf(K.prefix, state.g)
  local m = memberOf(state.s, id)
  local wasHead = redis.call('ZRANGE', groupKey, 0, 0)[1] == m
  removeFromGroup(B, K.ready, groupKey, m)
  local hold = redis.call('ZSCORE', K.held, state.g)
  if not hold then return end
  if redis.call('EXISTS', groupKey) == 0 then
    redis.call('ZREM', K.held, state.g)
  elseif wasHead and hold ~= 'inf' then
    redis.call('ZREM', K.held, state.g)
    advanceGroup(B, groupKey)
  end
end

-- Puts a job into its group as waiting now (promotion, retry of a failed job). Returns the
-- record written.
local function attachWaiting(K, B, id, state, data)
  state.st, state.ra = nil, nil
  local record = encodeJob(state, data)
  redis.call('HSET', K.jobs, id, record)
  addToGroup(B, K.ready, groupKeyOf(K.prefix, state.g), state.o, memberOf(state.s, id))
  return record
end
