#!lua flags=allow-key-locking
--[[ tick: the scheduler's bounded pass over one queue, after tick-scan named the groups due
items belong to. Expires jobs not started by their deadline (expiry.lua), promotes due delayed
jobs, releases groups whose retry backoff ended, ends leases that lapsed (past their deadline
without an answer: a failed attempt, retried or failed), trims retention, lists repeats
that are due (the caller computes their next time and commits each with commit-repeat), and
leases pending outcome callbacks that are due (the caller sends them), sets meta's count of
leases to the size of `active` (a count a failed script left wrong lasts one pass), and sets the
queue's `timer` to when it next needs a tick. Items of groups not declared (they came due since the
scan) are left for the next pass.

KEYS[1]     meta            hash    config and counters (meta.lua)
KEYS[2]     jobs            hash    id -> job record
KEYS[3]     ready           zset    idle group heads
KEYS[4]     active          zset    lease members by lease deadline
KEYS[5]     held            zset    group -> release time (+inf: paused)
KEYS[6]     delayed         zset    '<id> <group>' by runAt
KEYS[7]     completed       zset    kept completed ids by finishedAt
KEYS[8]     failed          zset    kept failed ids by finishedAt
KEYS[9]     repeat-due      zset    repeat key -> next run (epoch ms)
KEYS[10]    repeats         hash    repeat key -> repeat spec JSON
KEYS[11]    cancelled       zset    kept cancelled ids by finishedAt
KEYS[12]    outcomes        zset    pending outcome callbacks by next attempt (outcome.lua)
KEYS[13]    outcome-records hash    job id -> outcome record
KEYS[14]    prioritized     zset    idle group heads with a priority other than 0
KEYS[15]    starts          zset    recent starts (the queue rate limit)
KEYS[16]    dedup           zset    ids of ended jobs remembered by the dedup window (dedup.lua)
KEYS[17]    expiring        zset    '<id> <group>' of TTL jobs not started, by deadline (read only
                                    once meta's `expiring` flag is set, expiry.lua)
KEYS[18]    expired         zset    kept expired ids by finishedAt
KEYS[19]    debounce        hash    debounce key -> job id (an expired job's goes, debounce.lua)
KEYS[19+i]  group           zset    the group zset of the i-th group named in ARGV

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex, for new lease tokens and jitter)
ARGV[3] limit: at most this many items per phase
ARGV[4...] group names, one per declared group key

Returns {1, nextDueAt (epoch ms, -1 = nothing scheduled), readyNow 0|1, more 0|1,
         {{repeat key, spec JSON}...},
         {{job id, outcome record JSON, signingSecret, signingSecretNext}...}, events?}
  the last list: outcome callbacks leased to the caller to send (due ones, and those of jobs
  this tick failed for good), each with the queue's own signing secrets ('' where unset;
  outcome.lua)
  readyNow: jobs are ready to be reserved now; more: a phase hit its limit or met an
  undeclared group, tick again
  events (events.lua, only while meta's `ev` is later than now): `expired` for each job its
  deadline to start ended, `added` (waiting) for each delayed job promoted, `retrying` or `failed`
  for each lapsed lease (`added` for a job behind the first of a lapsed batch: batch.lua)
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include history
-- @include finish
-- @include job-ops
-- @include debounce
-- @include expiry
-- @include events

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], delayed = KEYS[6],
  completed = KEYS[7], failed = KEYS[8], repeatDue = KEYS[9], repeats = KEYS[10], cancelled = KEYS[11],
  outcomes = KEYS[12], outcomeRecords = KEYS[13], prioritized = KEYS[14], starts = KEYS[15], dedup = KEYS[16],
  expiring = KEYS[17], expired = KEYS[18], debounce = KEYS[19],
}
local now, seed, limit = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
-- Due repeats go back to the caller to commit, ready jobs to its drain; should neither happen
-- (the caller died), look again this late.
local RECHECK_MS = 60000

local keyOf, extra = {}, tallyFields(now)
for i = 4, #ARGV do
  keyOf[ARGV[i]] = KEYS[16 + i] -- ARGV[3 + j] names KEYS[19 + j]
  extra[#extra + 1] = groupField(ARGV[i])
end
local M = openMeta(KEYS[1], extra)
if not M.cfg then return { QUEUE_NOT_FOUND } end
openEvents(M, now)
local cfg = M.cfg
local more = false
-- At most `limit` members due by now, with their scores: {member, score, member, score, ...}.
local function due(key)
  local items = redis.call('ZRANGEBYSCORE', key, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
  if #items == 2 * limit then more = true end
  return items
end
-- The due members of `key` whose group is declared; `groupOf` reads a member's group.
local function declared(items, groupOf)
  local members, scores = {}, {}
  for i = 1, #items, 2 do
    if keyOf[groupOf(items[i])] then
      members[#members + 1] = items[i]
      scores[#scores + 1] = tonumber(items[i + 1])
    else
      more = true
    end
  end
  return members, scores
end

local B, T = newBatch(M, now), newTally()
B.reserving = true -- the caller drains when this tick reports readyNow
-- Every record the tick reads (the promoted jobs', the lapsed leases', the TTL jobs') is
-- read and decoded before its first write, so a record that cannot be read stops the script
-- before it changed anything (Redis does not roll back a script that errors half way); a
-- member whose record is gone is dropped. Promotion and release write records only through the
-- batch, and touch neither `active` nor the leased jobs, so reading the lapsed leases first
-- reads what it did.
local function readJobs(ids)
  local jobs = {}
  if #ids == 0 then return jobs end
  for i, raw in ipairs(redis.call('HMGET', K.jobs, unpack(ids))) do
    if raw then
      local state, data = decodeJob(raw)
      jobs[i] = { state = state, data = data }
    end
  end
  return jobs
end
local promoted = declared(due(K.delayed), function(m) return select(2, splitMember(m)) end)
local promotedIds = {}
for i, m in ipairs(promoted) do promotedIds[i] = splitMember(m) end
local released = declared(due(K.held), function(g) return g end)
local lapsed, deadlines = declared(due(K.active), function(m) return select(2, splitLease(m)) end)
local lapsedIds = {}
for i, m in ipairs(lapsed) do lapsedIds[i] = splitLease(m) end
local promotedJobs, lapsedJobs = readJobs(promotedIds), readJobs(lapsedIds)
-- TTL jobs past their deadline to start, read with the others. A job that started never expires:
-- its entry left at its start, so the look at its lease only guards against an entry a script
-- that failed half way left behind. An entry whose job ended, or started, just goes.
local ttl = metaGet(M, 'expiring')
local expiringNow = ttl and declared(due(K.expiring), function(m) return select(2, splitMember(m)) end) or {}
local expiringIds = {}
for i, m in ipairs(expiringNow) do expiringIds[i] = splitMember(m) end
local expiringJobs = readJobs(expiringIds)
for i, id in ipairs(expiringIds) do
  local job = expiringJobs[i]
  local state = job and job.state
  if state and not (state.st and state.st ~= 'delayed') and pastDeadline(state, now) and keyOf[state.g]
    and not (not state.st and redis.call('ZSCORE', K.active, leaseMember(leaseToken(M, id, state), id, state.g))) then
    job.expire = true
  end
end

-- A TTL job that did not start by its deadline ends `expired`, kept like a failed one.
local function expireJob(groupKey, id, state, data)
  local L = { id = id, group = state.g, groupKey = groupKey, member = memberOf(state.s, id), hint = '-', state = state, data = data }
  if state.st == 'delayed' then
    redis.call('ZREM', K.delayed, delayedMember(id, state.g))
  else
    detachWaiting(K, B, groupKey, id, state) -- out of its group: its next job becomes the head
  end
  releaseDebounce(K, id, state)
  countWaiting(M, id, -1, #data) -- it waited (bytes.lua)
  state.st, state.ra = 'expired', nil
  countTotal(M, 'n:e')
  retire(K, B, L, K.expired, cfg.keepFailed, now)
  noteEvent(M, 'expired', id, state.g, 'expired', 0, now, state.x)
end
-- First, so that a job both due to start and past its deadline is not promoted.
local gone = {}
if #expiringNow > 0 then
  redis.call('ZREM', K.expiring, unpack(expiringNow))
  for i, id in ipairs(expiringIds) do
    local job = expiringJobs[i]
    if job and job.expire then
      gone[id] = true
      expireJob(keyOf[job.state.g], id, job.state, job.data)
    end
  end
end

if #promoted > 0 then
  redis.call('ZREM', K.delayed, unpack(promoted))
  for i, id in ipairs(promotedIds) do
    local job = promotedJobs[i]
    if job and not gone[id] then
      attachWaiting(K, B, keyOf[job.state.g], id, job.state, job.data)
      noteAdded(M, id, job.state, now) -- delayed -> waiting
    end
  end
end

if #released > 0 then
  redis.call('ZREM', K.held, unpack(released))
  for _, group in ipairs(released) do releaseGroup(K, B, keyOf[group], group) end
end

if #lapsed > 0 then
  redis.call('ZREM', K.active, unpack(lapsed))
  for i, id in ipairs(lapsedIds) do
    local job = lapsedJobs[i]
    if job then
      local state = job.state
      local lease = {
        id = id, group = state.g, groupKey = keyOf[state.g], member = memberOf(state.s, id),
        hint = '?', state = state, data = job.data, deadline = deadlines[i], lapsed = true,
      }
      if Batch.isFirst(B, lease.groupKey, state.g, lease.member) then
        local err = 'lease expired: no answer within ' .. leaseMsOf(state, cfg) .. ' ms'
        countEnd(T, failJob(K, B, cfg, lease, err, true, -1, seed, now)) -- retried, or failed at the last attempt
      else
        Batch.release(K, B, lease, now) -- behind the first of its batch: untouched (batch.lua)
      end
    end
  end
end
-- meta's `active` is the number of leases (reserve's room): set it to what `active` holds, so a
-- slot leaked by a script that failed half way (before issue 16, group "0".."59") or any other
-- drift lasts one pass at most. One ZCARD per tick that runs; the idle scan pays nothing.
do
  local leases = redis.call('ZCARD', K.active)
  if metaNum(M, 'active') ~= leases then metaSet(M, 'active', int(leases)) end
end
flushBatch(K, B)
saveExpiries(K, B) -- jobs a lapsed batch gave back have their deadline to start again
writeTally(M, T, now)

-- Outcomes recorded just now are leased to this caller already; due ones get their next attempt.
local outcomes = outcomesToSend(B)
do
  local claimed, moreOutcomes = claimOutcomes(K, M, now, limit)
  for _, o in ipairs(claimed) do outcomes[#outcomes + 1] = o end
  if moreOutcomes then more = true end
end

if trimRetention(K.completed, K.jobs, cfg.keepCompleted, limit) then more = true end
if trimRetention(K.failed, K.jobs, cfg.keepFailed, limit) then more = true end
if trimRetention(K.cancelled, K.jobs, cfg.keepFailed, limit) then more = true end
if ttl and trimRetention(K.expired, K.jobs, cfg.keepFailed, limit) then more = true end

local repeats = {}
do
  local dueRepeats = redis.call('ZRANGEBYSCORE', K.repeatDue, '-inf', now, 'LIMIT', 0, limit)
  if #dueRepeats > 0 then
    local specs = redis.call('HMGET', K.repeats, unpack(dueRepeats))
    for i, key in ipairs(dueRepeats) do
      if specs[i] then repeats[#repeats + 1] = { key, specs[i] } end
    end
  end
end

-- The queue's next tick: its earliest timer, exactly (the repeats listed above are the
-- caller's to commit; commit-repeat notes their next run), or now when work was left.
local nextAt = more and now or nil
local function consider(at)
  if at and at ~= math.huge and (not nextAt or at < nextAt) then nextAt = at end
end
for _, key in ipairs({ K.delayed, K.held, K.active, ttl and K.expiring or nil }) do
  consider(tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]))
end
consider(tonumber(redis.call('ZRANGEBYSCORE', K.repeatDue, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]))
consider(nextOutcomeAt(K, M))
if #repeats > 0 then consider(now + RECHECK_MS) end

-- Ready heads: due now (drain), and the first one the ordering window (or a future orderMs)
-- still holds back, which is a timer.
-- A full rate window or a 429 ("queue") holds the dispatch: its end is the next tick.
local readyNow = 0
local hold = metaNum(M, 'hold')
if hold > 0 and hold <= now then metaSet(M, 'hold', false) end
if type(cfg.rateLimit) == 'table' then
  redis.call('ZREMRANGEBYSCORE', K.starts, '-inf', now - cfg.rateLimit.periodMs)
  metaSet(M, 'rs', false)
end
if hold > now then
  consider(hold)
elseif not M.v.paused and metaNum(M, 'ready') > 0 then
  local cutoff = now - cfg.orderingWindowMs
  if #redis.call('ZRANGEBYSCORE', K.ready, '-inf', cutoff, 'LIMIT', 0, 1) > 0 then
    readyNow = 1
    consider(now + RECHECK_MS)
  end
  local waiting = redis.call('ZRANGEBYSCORE', K.ready, '(' .. cutoff, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if waiting[2] then consider(tonumber(waiting[2]) + cfg.orderingWindowMs) end
  -- The first prioritized head tells (a head of lower priority may be due earlier: the drain
  -- that follows reserves it then).
  local ranked = metaGet(M, 'prio') and redis.call('ZRANGE', K.prioritized, 0, 0)[1]
  if ranked then
    local at = tonumber(string.sub(ranked, 1, 15)) + cfg.orderingWindowMs
    if at <= now then
      readyNow = 1
      consider(now + RECHECK_MS)
    else
      consider(at)
    end
  end
end
metaSet(M, 'timer', nextAt and int(nextAt) or false)
saveMeta(M)
return { 1, nextAt or -1, readyNow, more and 1 or 0, repeats, outcomes, M.events }
