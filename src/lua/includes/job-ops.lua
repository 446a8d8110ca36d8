-- Moving jobs into and out of their groups. B is a batch
-- (group.lua) the script flushes. K needs jobs, ready, prioritized, held, active.

-- @include job
-- @include meta
-- @include flow
-- @include group

-- Takes a waiting job out of its group. A retry backoff holds the group for one job, the one
-- whose runAt is the hold's release time: taking that job out releases the group at once;
-- taking out any other job leaves the hold alone. A group left empty leaves `held` too, so no
-- group is counted or listed without jobs.
local function detachWaiting(K, B, groupKey, id, state)
  removeFromGroup(K, B, groupKey, state.g, memberOf(state.s, id), state.o)
  local hold = tonumber(redis.call('ZSCORE', K.held, state.g))
  if not hold then return end
  if groupJobs(B.M, state.g) == 0 then
    redis.call('ZREM', K.held, state.g)
    local F = flowState(B.M, state.g)
    if F then F.h = nil end
  elseif hold == state.ra then
    redis.call('ZREM', K.held, state.g)
    releaseGroup(K, B, groupKey, state.g)
  end
end

-- Puts a job into its group as waiting now (promotion of a delayed job, retry of a failed one).
-- Returns the record, which the batch writes.
local function attachWaiting(K, B, groupKey, id, state, data)
  state.st, state.ra = nil, nil
  local record = encodeJob(state, data)
  B.fresh[#B.fresh + 1] = id
  B.fresh[#B.fresh + 1] = record
  addToGroup(K, B, groupKey, state.g, state.o, memberOf(state.s, id), state.pr)
  return record
end
