-- Reading jobs and groups for the API. K needs jobs,
-- ready, prioritized, active, held, pausedGroups.

-- @include errors
-- @include job
-- @include meta

-- The queue's meta and a job's record, or nil, nil and the error reply to return
-- (QUEUE_NOT_FOUND, JOB_NOT_FOUND).
local function loadJob(metaKey, jobsKey, id, extra)
  local M = openMeta(metaKey, extra)
  if not M.cfg then return nil, nil, { QUEUE_NOT_FOUND } end
  local raw = redis.call('HGET', jobsKey, id)
  if not raw then return nil, nil, { JOB_NOT_FOUND } end
  return M, raw
end

-- A job's state name, and its lease deadline when it is active. Waiting and active jobs carry
-- no `st`: `active` tells them apart.
local function jobState(K, M, id, state)
  if state.st then return state.st end
  local deadline = redis.call('ZSCORE', K.active, leaseMember(leaseToken(M, id, state), id, state.g))
  if deadline then return 'active', tonumber(deadline) end
  return 'waiting'
end

-- What GET shows of a job: {id, state JSON, data, state, startedAt, lease expiresAt,
-- maxAttempts, history JSON?} (-1 where not known). The attempt history (history.lua) only
-- `withHistory`: one job's GET shows it, listings leave it out.
local function jobView(K, M, id, raw, withHistory)
  local cfg = M.cfg
  local state, data = decodeJob(raw)
  local stateJson = string.sub(raw, 1, string.find(raw, '\n', 1, true) - 1)
  local name, deadline = jobState(K, M, id, state)
  local startedAt, expiresAt = state.sa or -1, deadline or -1
  if deadline and startedAt < 0 then startedAt = deadline - leaseMsOf(state, cfg) end
  return { id, stateJson, data, name, startedAt, expiresAt, state.ma or cfg.maxAttempts, withHistory and state.h or nil }
end

-- A group's own state: 'paused' | 'held' (backoff, or its head is inside the ordering window) |
-- 'ready' | 'active', or nil when it has no jobs. A paused queue does not change it.
local function groupState(K, M, groupKey, group, now)
  if groupJobs(M, group) == 0 then return nil end
  if redis.call('SISMEMBER', K.pausedGroups, group) == 1 then return 'paused' end
  if redis.call('ZSCORE', K.held, group) then return 'held' end
  local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
  local offered = head[1] and (redis.call('ZSCORE', K.ready, head[1])
    or (metaGet(M, 'prio') and redis.call('ZSCORE', K.prioritized, string.format('%015d', head[2]) .. head[1])))
  if offered then
    if tonumber(head[2]) + M.cfg.orderingWindowMs > now then return 'held' end
    return 'ready'
  end
  return 'active'
end
