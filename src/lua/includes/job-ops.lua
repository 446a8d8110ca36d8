-- Moving waiting and delayed jobs by hand. Needs job.lua and group.lua; K needs jobs, ready,
-- held, delayed, prefix.

-- Takes a waiting job out of its group. A held group left empty leaves `held` too, so no
-- group is counted or listed without jobs.
local function detachWaiting(K, id, state)
  local groupKey = groupKeyOf(K.prefix, state.g)
  removeFromGroup(groupKey, K.ready, memberOf(state.s, id))
  if redis.call('EXISTS', groupKey) == 0 then redis.call('ZREM', K.held, state.g) end
end

-- Puts a job into its group as waiting now (promotion, retry of a failed job).
local function attachWaiting(K, id, state, data)
  state.st, state.ra = nil, nil
  redis.call('HSET', K.jobs, id, encodeJob(state, data))
  addToGroup(groupKeyOf(K.prefix, state.g), K.ready, state.o, memberOf(state.s, id))
end
