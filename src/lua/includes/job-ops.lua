-- Moving waiting and delayed jobs by hand. Needs job.lua and group.lua; K needs jobs, ready,
-- held, delayed, prefix; B is a batch (group.lua) the script flushes.

-- Takes a waiting job out of its group. A retry backoff holds the group for one job, the one
-- whose runAt is the hold's release time: taking that job out releases the group at once;
-- taking out any other job leaves the hold alone. A group left empty leaves `held` too, so no
-- group is counted or listed without jobs.
local function detachWaiting(K, B, id, state)
  local groupKey = groupKeyOf(K.prefix, state.g)
  removeFromGroup(B, K.ready, groupKey, memberOf(state.s, id))
  local hold = tonumber(redis.call('ZSCORE', K.held, state.g))
  if not hold then return end
  if redis.call('EXISTS', groupKey) == 0 then
    redis.call('ZREM', K.held, state.g)
  elseif hold == state.ra then
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
