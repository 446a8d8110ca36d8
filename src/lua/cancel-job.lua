#!lua flags=allow-key-locking
--[[ cancel-job: ends a job that has not finished as `cancelled`. A waiting job leaves its group
(its next job becomes the head), a delayed one leaves `delayed`. An active job's lease is revoked:
its member leaves `active`, so each callback of it is refused (JOB_CANCELLED while `revoked`
remembers it, lease.lua), the attempt counts, and its group's next job is offered at once. The
job is then kept like a failed one (keepFailed), or deleted.

KEYS[1]  meta            hash  config and counters (meta.lua)
KEYS[2]  jobs            hash  id -> job record
KEYS[3]  ready           zset  idle group heads
KEYS[4]  active          zset  lease members by lease deadline
KEYS[5]  held            zset  group -> release time
KEYS[6]  delayed         zset  '<id> <group>' by runAt
KEYS[7]  cancelled       zset  kept cancelled ids by finishedAt
KEYS[8]  revoked         zset  leases a cancel ended, '<id> <token>' (lease.lua)
KEYS[9]  outcomes        zset  pending outcome callbacks by next attempt (outcome.lua)
KEYS[10] outcome-records hash  job id -> outcome record
KEYS[11] prioritized     zset  idle group heads with a priority
KEYS[12] dedup           zset  ids of ended jobs remembered by the dedup window (dedup.lua)
KEYS[13] debounce        hash  debounce key -> job id (a cancelled job's goes, debounce.lua)
KEYS[14] group           zset  the job's group (the caller read it with job-group)
KEYS[15] expiring        zset  TTL jobs not started (a cancelled one's entry goes, expiry.lua)

ARGV[1] id
ARGV[2] the job's group
ARGV[3] now (epoch ms)

Returns {1, dueAt, {{id, outcome record JSON, signingSecret, signingSecretNext}}, events?}: the
  outcome callback recorded (none when the job has no callback URL), leased to the caller to
  send, with the queue's own signing secrets ('' where unset; outcome.lua); events: its
  `cancelled` (events.lua, only while meta's `ev` is later than now)
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND,
        {-4, state} INVALID_STATE: finished already (completed, failed, cancelled or expired),
        {-10, group} JOB_CHANGED_GROUP: the job's group is another one; call again with it declared
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include job-ops
-- @include history
-- @include finish
-- @include lease
-- @include view
-- @include debounce
-- @include expiry
-- @include bytes
-- @include events

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5],
  outcomes = KEYS[9], outcomeRecords = KEYS[10], prioritized = KEYS[11], dedup = KEYS[12], debounce = KEYS[13],
  expiring = KEYS[15],
}
local id, now = ARGV[1], tonumber(ARGV[3])
local M, raw, err = loadJob(KEYS[1], K.jobs, id, { groupField(ARGV[2]) })
if err then return err end
openEvents(M, now)
local state, data = decodeJob(raw)
if state.g ~= ARGV[2] then return { JOB_CHANGED_GROUP, state.g } end
if state.st and state.st ~= 'delayed' then return { INVALID_STATE, state.st } end

local B = newBatch(M, now)
-- Out of its group by the time it retires ('-'), unless it holds the group's lease.
local L = { id = id, group = state.g, groupKey = KEYS[14], member = memberOf(state.s, id), hint = '-', state = state, data = data }
if state.st == 'delayed' then
  redis.call('ZREM', KEYS[6], delayedMember(id, state.g))
else
  local token = leaseToken(M, id, state)
  local lease = leaseMember(token, id, state.g)
  local deadline = tonumber(redis.call('ZSCORE', K.active, lease))
  if deadline then
    redis.call('ZREM', K.active, lease)
    metaAdd(M, 'active', -1)
    revokeLease(KEYS[8], id, token, deadline, now)
    state.a = (state.a or 0) + 1
    state.sa = startOf(state, M.cfg, deadline)
    noteAttempt(state, state.sa, 'x', 0, nil, now)
    L.hint = '?' -- solo or not: retire does what either needs
  else
    detachWaiting(K, B, KEYS[14], id, state)
  end
end
releaseDebounce(K, id, state)
if state.x and L.hint == '-' then dropExpiries(K, { delayedMember(id, state.g) }) end -- it never started
if L.hint == '-' then countWaiting(M, id, -1, #data) end -- it waited (bytes.lua)
state.st, state.ra = 'cancelled', nil
countTotal(M, 'n:x')
retire(K, B, L, KEYS[7], M.cfg.keepFailed, now)
noteEvent(M, 'cancelled', id, state.g, 'cancelled', state.a or 0, now)
flushBatch(K, B)
saveMeta(M)
return { 1, dueReport(M, now), outcomesToSend(B), M.events }
