-- Lease checks. A lease is live while its member
-- '<id> <token><group>' is in `active`; every lease end removes that member and counts an
-- attempt, which changes the job's token, so a stale holder never matches again (G1 fencing).

-- @include errors
-- @include job
-- @include meta

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

-- A cancel of an active job remembers its lease, '<id> <token>', in `revoked` (scored by when it
-- is forgotten), so that the lease's late callbacks hear why it ended. At most REVOKED_MAX are
-- kept, each for REVOKED_KEEP_MS past the lease's own end.
local REVOKED_KEEP_MS = 3600000
local REVOKED_MAX = 1000

local function revokedMember(id, token)
  return id .. ' ' .. token
end

-- Whether lease (id, token), which is not live, was ended by a cancel that is still remembered.
-- Read only on a refusal's path: a live lease pays nothing for it.
local function wasRevoked(revokedKey, id, token)
  return redis.call('ZSCORE', revokedKey, revokedMember(id, token)) ~= false
end

-- Why lease (id, token) is not live: JOB_CANCELLED or LEASE_LOST.
local function lostLease(revokedKey, id, token)
  return wasRevoked(revokedKey, id, token) and JOB_CANCELLED or LEASE_LOST
end

-- Remembers a lease that a cancel ended (its deadline was `deadline`), forgetting the ones whose
-- time is over and, past REVOKED_MAX, those due to be forgotten first.
local function revokeLease(revokedKey, id, token, deadline, now)
  redis.call('ZADD', revokedKey, math.max(deadline, now) + REVOKED_KEEP_MS, revokedMember(id, token))
  redis.call('ZREMRANGEBYSCORE', revokedKey, '-inf', now)
  redis.call('ZREMRANGEBYRANK', revokedKey, 0, -(REVOKED_MAX + 1))
end
