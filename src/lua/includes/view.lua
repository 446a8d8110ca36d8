-- Reading jobs and groups for the API. Needs job.lua; K needs jobs, ready, active, held,
-- pausedGroups, prefix.

-- The queue's config and a job's record, or nil, nil and the error reply to return
-- ({-1} no queue, {-2} no job).
local function loadJob(metaKey, jobsKey, id)
  local cfgJson = redis.call('HGET', metaKey, 'config')
  if not cfgJson then return nil, nil, { -1 } end
  local raw = redis.call('HGET', jobsKey, id)
  if not raw then return nil, nil, { -2 } end
  return cjson.decode(cfgJson), raw
end

-- What GET shows of a job: {id, state JSON, data, state, startedAt, lease expiresAt,
-- maxAttempts} (-1 where not known). Waiting and active jobs carry no `st`: `active` tells them apart.
local function jobView(K, cfg, id, raw)
  local state, data = decodeJob(raw)
  local stateJson = string.sub(raw, 1, #raw - #data - 1)
  local name, startedAt, expiresAt = state.st, state.sa or -1, -1
  if not name then
    local deadline = redis.call('ZSCORE', K.active, id)
    name = deadline and 'active' or 'waiting'
    if deadline then
      expiresAt = tonumber(deadline)
      if startedAt < 0 then startedAt = expiresAt - leaseMsOf(state, cfg) end
    end
  end
  return { id, stateJson, data, name, startedAt, expiresAt, state.ma or cfg.maxAttempts }
end

-- A group's own state: 'paused' | 'held' (backoff, or its head is inside the ordering window) |
-- 'ready' | 'active', or nil when it has no jobs. A paused queue does not change it.
local function groupState(K, cfg, group, now)
  local groupKey = groupKeyOf(K.prefix, group)
  local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
  if not head[1] then return nil end
  if redis.call('SISMEMBER', K.pausedGroups, group) == 1 then return 'paused' end
  if redis.call('ZSCORE', K.held, group) then return 'held' end
  if redis.call('ZSCORE', K.ready, head[1]) then
    if tonumber(head[2]) + cfg.orderingWindowMs > now then return 'held' end
    return 'ready'
  end
  return 'active'
end
