-- Creating a job record. Needs job.lua and group.lua.

-- Writes job `id` (with sequence `seq`) unless the id exists. A job due now joins its group,
-- a future one waits in `delayed`. Returns its state and whether it was a duplicate.
-- K needs: jobs, ready, delayed, active.
local function insertJob(K, groupKey, seq, seed, now, id, group, orderMs, runAt, data, options)
  local state = { g = group, s = seq, o = orderMs, t = tokenFor(seed, id, 0) }
  if options then
    for k, v in pairs(options) do state[k] = v end
  end
  if state.c == orderMs then state.c = nil end
  local delayed = runAt > now
  if delayed then
    state.st = 'delayed'
    state.ra = runAt
  end
  if redis.call('HSETNX', K.jobs, id, encodeJob(state, data)) == 0 then
    local existing = decodeJob(redis.call('HGET', K.jobs, id))
    if existing.st then return existing.st, true end
    return redis.call('ZSCORE', K.active, id) and 'active' or 'waiting', true
  end
  if delayed then
    redis.call('ZADD', K.delayed, runAt, id)
    noteTimer(K.ready, runAt)
    return 'delayed', false
  end
  addToGroup(groupKey, K.ready, orderMs, memberOf(seq, id))
  return 'waiting', false
end
