-- Lease checks. Needs job.lua and meta.lua. A lease is live while its member
-- '<id> <token><group>' is in `active`; every lease end removes that member and counts an
-- attempt, which changes the job's token, so a stale holder never matches again (G1 fencing).

-- The live lease behind (id, token): state, data, deadline and member, or nil. K needs jobs
-- and active.
local function liveLease(K, M, id, token)
  local raw = redis.call('HGET', K.jobs, id)
  if not raw then return nil end
  local state, data = decodeJob(raw)
  if state.st or leaseToken(M, id, state) ~= token then return nil end
  local member = leaseMember(token, id, state.g)
  local deadline = redis.call('ZSCORE', K.active, member)
  if not deadline then return nil end
  return state, data, tonumber(deadline), member
end
