#!lua flags=allow-key-locking
--[[ settle: ends leases (complete or fail, each fenced by its token) and then reserves up to N
ready jobs, in one round trip. Reserve-only, complete-and-reserve-next and batched acks of a
drain are all this one script. Finished groups offer their next job to `ready` first, so the
reservation picks the oldest heads across all groups, this group's next one included (G5).
The caller names each settlement's group (it leased the job, or read its record), so the group's
key is declared; the lease member '<id> <token><group>' fences the claim.

KEYS[1]    meta            hash  config and counters (meta.lua)
KEYS[2]    jobs            hash  id -> job record
KEYS[3]    ready           zset  idle group heads
KEYS[4]    active          zset  lease members by lease deadline (epoch ms)
KEYS[5]    held            zset  group -> release time (+inf: paused)
KEYS[6]    completed       zset  kept completed ids by finishedAt
KEYS[7]    failed          zset  kept failed ids by finishedAt
KEYS[8]    paused-groups   set   paused group names
KEYS[9]    revoked         zset  leases a cancel ended (lease.lua)
KEYS[10]   outcomes        zset  pending outcome callbacks by next attempt (outcome.lua)
KEYS[11]   outcome-records hash  job id -> outcome record
KEYS[12]   prioritized     zset  idle group heads with a priority other than 0
KEYS[13]   starts          zset  recent starts (the queue rate limit, reserve.lua)
KEYS[14]   debounce        hash  debounce key -> job id (a leased job's goes, debounce.lua)
KEYS[15]   dedup           zset  ids of ended jobs remembered by the dedup window (dedup.lua)
KEYS[16]   results         zset  ids of completed jobs kept for a waiter, by expiry (finish.lua)
KEYS[17]   expiring        zset  TTL jobs not started (a reserved one's entry goes, expiry.lua)
KEYS[17+i] group           zset  the group zset of settlement i

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex, for new lease tokens)
ARGV[3] m, the number of settlements
ARGV[4] n, how many jobs to reserve afterwards (0: none)
ARGV[5] '1': reserve only if every settlement's lease was live (complete/fail of one lease: a
        stale holder must change nothing, not even lease jobs it would never receive)
then 15 fields per settlement: kind ('complete'|'fail'|'release': a batch's job its endpoint did
  not get to, back in its group untouched, finish.lua Batch.release), id, lease token, group, sequence,
  hint ('s' leased solo, 'm' in its group zset, '?' unknown: finish.lua),
  payload (complete: result JSON text or ''; fail: error text),
  flag (complete: '1' = result truncated; fail: '1' = may retry),
  retryAfterMs (fail: -1 = use the backoff), the endpoint's HTTP status (0: none),
  record ('1' the job's record is needed: a callback URL of its own, or its end kept for a
    waiter, finish.lua keepResult; '0' neither),
  named ('1' the producer named the job's id: its end is remembered, dedup.lua),
  startedAt (when the caller leased the job, epoch ms; '' unknown: the run histogram, totals.lua),
  attempt (the attempt under way, as the caller knows it: a completion's event when its record
    is not read, events.lua; '' unknown: while events are wanted, its record is read then),
  batch ('<batch id> <index> <size>' when the attempt was a batch's, for its history; '' none)

Returns {1, {{id, state}...}, config JSON, {{id, state JSON, data, lease deadline, hint, token, message id}...}, dueAt,
         {{id, outcome record JSON, signingSecret, signingSecretNext}...}, events?}
  where state is 'completed' | 'waiting' (retry pending, or released) | 'failed' | 'LEASE_LOST' |
  'JOB_CANCELLED' (a cancel ended the lease: nothing changed, as for LEASE_LOST) |
  'OUT_OF_ORDER' (a lease callback of a batch's job while a job ahead of it in the batch is still
  leased: nothing changed; a callback's failure of a batch's job also releases the jobs behind it
  in its batch, batch.lua); the last
  list holds the outcome callbacks this call recorded, leased to the caller to send, each
  with the queue's own signing secrets ('' where unset; outcome.lua); events (events.lua, only
  while meta's `ev` is later than now): each settlement's `completed`, `retrying` or `failed`,
  then an `active` for each job leased
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include history
-- @include finish
-- @include lease
-- @include reserve
-- @include events

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5],
  completed = KEYS[6], failed = KEYS[7], pausedGroups = KEYS[8], revoked = KEYS[9],
  outcomes = KEYS[10], outcomeRecords = KEYS[11], prioritized = KEYS[12], starts = KEYS[13], debounce = KEYS[14],
  dedup = KEYS[15], results = KEYS[16], expiring = KEYS[17],
}
local now, seed = tonumber(ARGV[1]), ARGV[2]
local m, n, onlyIfLive = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5] == '1'
local function arg(i, field) return ARGV[5 + (i - 1) * 15 + field] end

local extra = tallyFields(now)
for i = 1, m do extra[#extra + 1] = groupField(arg(i, 4)) end
local M = openMeta(KEYS[1], extra)
if not M.cfg then return { QUEUE_NOT_FOUND } end
openEvents(M, now)
local cfg = M.cfg

local results, sent, ended = {}, {}, 0
if m > 0 then
  local leases, members = {}, {}
  for i = 1, m do
    local id, group = arg(i, 2), arg(i, 4)
    leases[i] = {
      id = id, group = group, groupKey = KEYS[17 + i], member = memberOf(tonumber(arg(i, 5)), id),
      hint = arg(i, 6), token = arg(i, 3), status = tonumber(arg(i, 10)), named = arg(i, 12) == '1',
      startedAt = tonumber(arg(i, 13)), attempt = tonumber(arg(i, 14)),
    }
    local batch, index, size = string.match(arg(i, 15), '^(%S+) (%d+) (%d+)$')
    if batch then leases[i].batch = { batch, tonumber(index), tonumber(size) } end
    members[i] = leaseMember(arg(i, 3), id, group)
  end
  -- Removing a lease's member is its fencing check. One completion of a job that is not kept
  -- and has no callback URL, whose start the caller knows, needs nothing more; otherwise the
  -- deadlines (start times) and records are read first.
  local live = {}
  -- While events are wanted every completion is read: its job is kept as a waiter's would be
  -- (finish.lua keepResult), so that its end is there to answer for the events' retention.
  local function recordNeeded(i)
    return arg(i, 1) ~= 'complete' or cfg.keepCompleted > 0 or cfg.callbackUrl ~= nil or arg(i, 11) == '1' or M.events ~= nil
  end
  if m == 1 and not recordNeeded(1) and leases[1].startedAt then
    live[1] = redis.call('ZREM', K.active, members[1]) == 1
    if live[1] then ended = 1 end
  else
    local deadlines = redis.call('ZMSCORE', K.active, unpack(members))
    local gone, seen, needed = {}, {}, {}
    for i = 1, m do
      if deadlines[i] and not seen[members[i]] then
        live[i] = true
        seen[members[i]] = true -- a lease given twice: the second is a stale holder
        leases[i].deadline = tonumber(deadlines[i])
        gone[#gone + 1] = members[i]
        if recordNeeded(i) then needed[#needed + 1] = i end
      end
    end
    -- A lease callback (the group unknown to its caller: hint '?') ends the jobs of a batch in
    -- order: while its batch is out, only the job at the head of its group (the jobs ahead of
    -- it ended).
    if m == 1 and live[1] and arg(1, 6) == '?' and Batch.out(M, leases[1].group) > 0
      and redis.call('ZRANGE', leases[1].groupKey, 0, 0)[1] ~= leases[1].member then
      saveMeta(M)
      return { 1, { { leases[1].id, 'OUT_OF_ORDER' } }, M.v.config, {}, dueReport(M, now), {}, M.events }
    end
    ended = #gone
    -- The records are read (and decoded) before the first write: one that cannot be read stops
    -- the call with nothing changed.
    if #needed > 0 then
      local ids = {}
      for j, i in ipairs(needed) do ids[j] = leases[i].id end
      for j, raw in ipairs(redis.call('HMGET', K.jobs, unpack(ids))) do
        local lease = leases[needed[j]]
        lease.state, lease.data = decodeJob(raw)
      end
    end
    if ended > 0 then redis.call('ZREM', K.active, unpack(gone)) end
  end
  metaAdd(M, 'active', -ended)
  if onlyIfLive and ended < m then n = 0 end

  local B, T = newBatch(M, now), newTally()
  -- A batch's job failed through its callback (its endpoint took the batch with 202): the jobs
  -- behind it in its batch, still leased, go back to their group untouched, as a partial
  -- answer's do. They share the failed lease's deadline (reserve.lua, heartbeat.lua).
  local function releaseBehind(L)
    if Batch.out(M, L.group) == 0 or not L.deadline then return end
    local behind, ids = {}, {}
    for _, member in ipairs(redis.call('ZRANGEBYSCORE', K.active, L.deadline, L.deadline)) do
      local id, owner = splitLease(member)
      if owner == L.group then
        behind[#behind + 1] = member
        ids[#ids + 1] = id
      end
    end
    if #ids == 0 then return end
    redis.call('ZREM', K.active, unpack(behind))
    metaAdd(M, 'active', -#behind)
    for j, raw in ipairs(redis.call('HMGET', K.jobs, unpack(ids))) do
      if raw then
        local state, data = decodeJob(raw)
        Batch.release(K, B, { id = ids[j], group = L.group, groupKey = L.groupKey, member = memberOf(state.s, ids[j]), hint = 'm', state = state, data = data }, now)
      else
        Batch.leaseEnded(M, L.group)
      end
    end
  end
  B.reserving = n > 0 and not M.v.paused
  for i = 1, m do
    local kind, payload, flag = arg(i, 1), arg(i, 7), arg(i, 8) == '1'
    local newState
    if not live[i] then
      newState = wasRevoked(K.revoked, leases[i].id, leases[i].token) and 'JOB_CANCELLED' or 'LEASE_LOST'
    elseif kind == 'complete' then
      newState = completeJob(K, B, cfg, leases[i], payload, flag, now)
    elseif kind == 'release' then
      newState = Batch.release(K, B, leases[i], now)
    else
      newState = failJob(K, B, cfg, leases[i], payload, flag, tonumber(arg(i, 9)), seed, now)
      if leases[i].hint == '?' then releaseBehind(leases[i]) end
    end
    results[i] = { leases[i].id, newState }
    if kind ~= 'release' then countEnd(T, newState) end
  end
  flushBatch(K, B)
  saveExpiries(K, B) -- released jobs with a TTL have their deadline to start again
  writeTally(M, T, now)
  sent = outcomesToSend(B)
end

local jobs = {}
if n > 0 and not M.v.paused then jobs = reserveJobs(K, M, n, now) end
-- (Only when a lease ended here: a refused settle, every lease lost, writes nothing.)
if n == 0 and (m == 0 or ended > 0) and not M.v.paused and metaNum(M, 'ready') > 0 and metaNum(M, 'active') < cfg.concurrency then
  -- Jobs are ready, there is room, and the caller takes none (a drain out of its invocation's
  -- budget): the scheduler must come for them.
  noteTimer(M, math.max(now, metaNum(M, 'hold')))
end
saveMeta(M)
return { 1, results, M.v.config, jobs, dueReport(M, now), sent, M.events }
