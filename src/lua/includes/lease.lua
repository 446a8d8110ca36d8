-- Lease checks. Needs job.lua and a table K with jobs and active. A lease is live while its
-- job is in `active` and the token matches; every lease end rotates or drops the token, so a
-- stale holder never matches again (G1 fencing).

-- The live lease behind (id, token): state, data and deadline, or nil.
local function liveLease(K, id, token)
  local raw = redis.call('HGET', K.jobs, id)
  if not raw then return nil end
  local state, data = decodeJob(raw)
  if state.st or state.t ~= token then return nil end
  local deadline = redis.call('ZSCORE', K.active, id)
  if not deadline then return nil end
  return state, data, tonumber(deadline)
end

-- Like liveLease, but the lease is released (removed from `active`). The deadline is read only when
-- `wantDeadline` (it costs a command and only a kept completed job needs it, for startedAt).
local function takeLease(K, id, token, wantDeadline)
  local raw = redis.call('HGET', K.jobs, id)
  if not raw then return nil end
  local state, data = decodeJob(raw)
  if state.st or state.t ~= token then return nil end
  local deadline = false
  if wantDeadline then
    deadline = redis.call('ZSCORE', K.active, id)
    if not deadline then return nil end
  end
  if redis.call('ZREM', K.active, id) == 0 then return nil end
  return state, data, tonumber(deadline)
end

