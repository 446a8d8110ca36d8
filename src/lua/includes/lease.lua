-- Lease checks. Needs job.lua and a table K with jobs and active. A lease is live while its
-- job is in `active` and the token matches; every lease end rotates or drops the token, so a
-- stale holder never matches again (G1 fencing).

-- Whether `raw` (a job record) is leased under `token`: its state and data, or nil.
local function leasedRecord(raw, token)
  if not raw then return nil end
  local state, data = decodeJob(raw)
  if state.st or state.t ~= token then return nil end
  return state, data
end

-- The live lease behind (id, token): state, data and deadline, or nil.
local function liveLease(K, id, token)
  local state, data = leasedRecord(redis.call('HGET', K.jobs, id), token)
  if not state then return nil end
  local deadline = redis.call('ZSCORE', K.active, id)
  if not deadline then return nil end
  return state, data, tonumber(deadline)
end
