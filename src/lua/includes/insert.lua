-- Creating job records.

-- @include job
-- @include meta
-- @include group

-- The state a duplicate enqueue reports: its record's, or active/waiting for a job without one.
local function stateOfExisting(K, M, id, raw)
  local state = decodeJob(raw)
  if state.st then return state.st end
  return redis.call('ZSCORE', K.active, leaseMember(leaseToken(M, id, state), id, state.g)) and 'active' or 'waiting'
end

-- When a job that has not started starts: now (waiting), or at runAt (delayed).
local function setStart(state, runAt, now)
  if runAt > now then
    state.st, state.ra = 'delayed', runAt
  else
    state.st, state.ra = nil, nil
  end
end

-- The state of a new job `id` (sequence `seq`): due now, or delayed until runAt.
local function newJobState(now, group, seq, orderMs, runAt, options)
  local state = { g = group, s = seq, o = orderMs }
  if options then
    for k, v in pairs(options) do state[k] = v end
  end
  setStart(state, runAt, now)
  return state
end

-- Places a new job whose record is written (or in B.fresh): a due one joins its group, a
-- future one waits in `delayed`. Returns the state it entered.
local function placeJob(K, B, groupKey, id, state)
  if state.st == 'delayed' then
    B.delayed[#B.delayed + 1] = state.ra
    B.delayed[#B.delayed + 1] = delayedMember(id, state.g)
    noteTimer(B.M, state.ra)
    return 'delayed'
  end
  addToGroup(K, B, groupKey, state.g, state.o, memberOf(state.s, id), state.pr)
  return 'waiting'
end
