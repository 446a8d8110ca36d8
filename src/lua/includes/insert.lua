-- Creating job records. Needs job.lua and group.lua.

-- The state a duplicate enqueue reports: its record's, or active/waiting for a job without one.
local function stateOfExisting(K, id, raw)
  local state = decodeJob(raw)
  if state.st then return state.st end
  return redis.call('ZSCORE', K.active, id) and 'active' or 'waiting'
end

-- Creates job `id` (sequence `seq`), known not to exist: a job due now joins its group, a future
-- one waits in `delayed`. Writes go through batch B (flushBatch). Returns the state and record.
local function insertJob(K, B, groupKey, seq, seed, now, id, group, orderMs, runAt, data, options)
  local state = { g = group, s = seq, o = orderMs, t = tokenFor(seed, id, 0) }
  if options then
    for k, v in pairs(options) do state[k] = v end
  end
  local delayed = runAt > now
  if delayed then
    state.st = 'delayed'
    state.ra = runAt
  end
  local record = encodeJob(state, data)
  B.fresh[#B.fresh + 1] = id
  B.fresh[#B.fresh + 1] = record
  if delayed then
    B.delayed[#B.delayed + 1] = runAt
    B.delayed[#B.delayed + 1] = id
    batchTimer(B, runAt)
    return 'delayed', record
  end
  addToGroup(B, K.ready, groupKey, orderMs, memberOf(seq, id))
  return 'waiting', record
end
