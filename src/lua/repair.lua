#!lua flags=allow-key-locking
--[[ repair: brings back jobs that a script failing half way left out of every index (before
issue 16, group names "0".."59" made scripts fail after their first writes: docs/internals.md#redis-keys).
One page of the `jobs` hash per call; the caller repeats until the cursor comes back '0'. A
record is indexed when
  delayed:                      its '<id> <group>' is in `delayed`;
  completed, failed, cancelled, expired: its id is in that zset;
  waiting:                      its member is in its group zset, or it holds a lease (solo).
A record in no index goes back into its own: nothing is lost, nothing runs twice. A waiting (not
leased) or delayed job with a deadline to start (`x`, expiry.lua) is in `expiring` too. Then each
group of the page's waiting records is checked whole: its job count in meta is set to what its
keys hold (zset + solo leases: a failed script never saved its counts, saveMeta comes last); a
one-job group with jobs that is neither leased, held nor offered has its head offered again (a
batch's count of jobs out is set to the leases `active` holds of its group first, batch.lua); a
flow group's state is rebuilt from its keys (offers, leases, hold; the starts of its rate window
are kept when readable) and refilled. Every call also sets meta `active` to the leases `active`
holds (as each tick does), drops meta `live` when it re-indexed a record (quota.lua counts it
again), and the first page deletes the per-minute counters of the old layout ('c:<n>', 'r:<n>',
and an 'f:<n>' that is not a flow state's JSON).
Reads and checks come first: a page whose groups are not all declared writes nothing and names
them, for a call with the same cursor.

KEYS[1]     meta         hash  config and counters (meta.lua)
KEYS[2]     jobs         hash  id -> job record
KEYS[3]     ready        zset  idle group heads
KEYS[4]     active       zset  lease members by deadline
KEYS[5]     held         zset  group -> release time (+inf: paused)
KEYS[6]     delayed      zset  '<id> <group>' by runAt
KEYS[7]     completed    zset  kept completed ids by finishedAt
KEYS[8]     failed       zset  kept failed ids by finishedAt
KEYS[9]     cancelled    zset  kept cancelled ids by finishedAt
KEYS[10]    prioritized  zset  idle group heads with a priority other than 0
KEYS[11]    expired      zset  kept expired ids by finishedAt
KEYS[12]    expiring     zset  '<id> <group>' of TTL jobs not started, by deadline (expiry.lua)
KEYS[12+i]  group        zset  the group zset of the i-th group named in ARGV

ARGV[1] now (epoch ms)
ARGV[2] HSCAN cursor of `jobs` ('0' at first)
ARGV[3] COUNT hint: about this many records per page
ARGV[4...] group names, one per declared group key

Returns {1, next cursor ('0': done), {group...}, jobs re-indexed, groups offered again, dueAt}
  a non-empty group list: nothing was done; call again with the same cursor and these declared
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include expiry

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], delayed = KEYS[6], prioritized = KEYS[10],
}
local ENDED = { completed = KEYS[7], failed = KEYS[8], cancelled = KEYS[9], expired = KEYS[11] }
local now, cursor, count = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local keyOf, extra = {}, {}
for i = 4, #ARGV do
  keyOf[ARGV[i]] = KEYS[9 + i] -- ARGV[3 + j] names KEYS[12 + j]
  extra[#extra + 1] = groupField(ARGV[i])
end
local M = openMeta(KEYS[1], extra)
if not M.cfg then return { QUEUE_NOT_FOUND } end

-- Reads: the page, and where each of its records is indexed.
local page = redis.call('HSCAN', K.jobs, cursor, 'COUNT', count)
local delayed, ended, waiting = {}, { completed = {}, failed = {}, cancelled = {}, expired = {} }, {}
for i = 1, #page[2], 2 do
  local job = { id = page[2][i], state = decodeJob(page[2][i + 1]) }
  local st = job.state.st
  if st == 'delayed' then
    delayed[#delayed + 1] = job
  elseif ended[st] then
    table.insert(ended[st], job)
  elseif not st then
    waiting[#waiting + 1] = job
  end
end

local function missing(key, jobs, memberOfJob)
  local out = {}
  if #jobs == 0 then return out end
  local members = {}
  for i, job in ipairs(jobs) do members[i] = memberOfJob(job) end
  for i, score in ipairs(redis.call('ZMSCORE', key, unpack(members))) do
    if not score then out[#out + 1] = jobs[i] end
  end
  return out
end

local lostDelayed = missing(K.delayed, delayed, function(job) return delayedMember(job.id, job.state.g) end)
local lostEnded = {}
for st, jobs in pairs(ended) do
  lostEnded[st] = missing(ENDED[st], jobs, function(job) return job.id end)
end
local idle = missing(K.active, waiting, function(job) return leaseMember(leaseToken(M, job.id, job.state), job.id, job.state.g) end)

-- The groups of the page's waiting records: each must be declared.
local groups, byGroup, undeclared, seen = {}, {}, {}, {}
for _, job in ipairs(waiting) do
  local g = job.state.g
  if not seen[g] then
    seen[g] = true
    if keyOf[g] then
      groups[#groups + 1] = g
      byGroup[g] = {}
    else
      undeclared[#undeclared + 1] = g
    end
  end
end
if #undeclared > 0 then return { 1, cursor, undeclared, 0, 0, -1 } end

for _, job in ipairs(idle) do
  local list = byGroup[job.state.g]
  list[#list + 1] = job
end
-- Jobs that have not started and have a deadline: each has its entry in `expiring`.
local deadlined = {}
for _, list in ipairs({ delayed, idle }) do
  for _, job in ipairs(list) do
    if job.state.x and not job.state.a then deadlined[#deadlined + 1] = job end
  end
end
local lostDeadlines = missing(KEYS[12], deadlined, function(job) return delayedMember(job.id, job.state.g) end)
local lostWaiting = {}
for _, g in ipairs(groups) do
  for _, job in ipairs(missing(keyOf[g], byGroup[g], function(j) return memberOf(j.state.s, j.id) end)) do
    lostWaiting[#lostWaiting + 1] = job
  end
end

-- Writes: each lost record back into its index.
local B, reindexed, offered = newBatch(M, now), 0, 0
for _, job in ipairs(lostDelayed) do
  B.delayed[#B.delayed + 1] = job.state.ra
  B.delayed[#B.delayed + 1] = delayedMember(job.id, job.state.g)
  noteTimer(M, job.state.ra)
  reindexed = reindexed + 1
end
for st, jobs in pairs(lostEnded) do
  for _, job in ipairs(jobs) do
    redis.call('ZADD', ENDED[st], job.state.f or now, job.id)
    reindexed = reindexed + 1
  end
end
for _, job in ipairs(lostDeadlines) do
  B.expiring = B.expiring or {}
  B.expiring[#B.expiring + 1] = job.state.x
  B.expiring[#B.expiring + 1] = delayedMember(job.id, job.state.g)
  reindexed = reindexed + 1
end
saveExpiries({ expiring = KEYS[12] }, B)
for _, job in ipairs(lostWaiting) do
  if job.state.pr and job.state.pr ~= 0 then metaSet(M, 'prio', '1') end
  redis.call('ZADD', keyOf[job.state.g], job.state.o, memberOf(job.state.s, job.id))
  reindexed = reindexed + 1
end

-- Each group of the page, whole. Its leases: members of `active` that name it, and whether each
-- is in the zset (else a solo lease).
local leasesOf = {}
if #groups > 0 then
  local ids, owners = {}, {}
  for _, lease in ipairs(redis.call('ZRANGE', K.active, 0, -1)) do
    local id, owner = splitLease(lease)
    if byGroup[owner] then
      ids[#ids + 1] = id
      owners[#ids] = owner
    end
  end
  if #ids > 0 then
    for i, raw in ipairs(redis.call('HMGET', K.jobs, unpack(ids))) do
      local list = leasesOf[owners[i]] or {}
      leasesOf[owners[i]] = list
      list[#list + 1] = raw and memberOf(decodeJob(raw).s, ids[i]) or '?'
    end
  end
end
local prio = metaGet(M, 'prio')
for _, g in ipairs(groups) do
  local groupKey, leases = keyOf[g], leasesOf[g] or {}
  local inZset = #leases > 0 and redis.call('ZMSCORE', groupKey, unpack(leases)) or {}
  local solo = 0
  for i = 1, #leases do
    if not inZset[i] then
      leases[i] = '?'
      solo = solo + 1
    end
  end
  local jobs = redis.call('ZCARD', groupKey) + solo
  metaSet(M, groupField(g), jobs > 0 and int(jobs) or false)
  local hold = redis.call('ZSCORE', K.held, g)
  if isFlow(M, g) then
    local F = rebuildFlow(K, B, groupKey, g, flowState(M, g))
    local before = #F.t
    if jobs > 0 then refillGroup(K, B, groupKey, g, F) end
    if #F.t > before then offered = offered + 1 end
  else
    -- A batch out counts the group's leases that `active` holds (batch.lua): none, and the group
    -- offers its head again below.
    local out, held = Batch.out(M, g)
    if out > 0 and out ~= #leases then metaSet(M, Batch.field(g), #leases > 0 and int(#leases) .. (held and 'h' or '') or false) end
    if jobs > 0 and #leases == 0 and not hold then
      local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
      local m = head[1]
      if m and not redis.call('ZSCORE', K.ready, m)
        and not (prio and redis.call('ZSCORE', K.prioritized, prioritizedMember(tonumber(head[2]), m))) then
        advanceGroup(K, B, groupKey, g)
        offered = offered + 1
      end
    end
  end
end
flushBatch(K, B)

local leases = redis.call('ZCARD', K.active)
if metaNum(M, 'active') ~= leases then metaSet(M, 'active', int(leases)) end
-- The script that stranded a record never counted it in `live` (quota.lua): the next enqueue
-- counts the queue's jobs again from its keys, which hold them all now.
if reindexed > 0 then metaSet(M, 'live', false) end
if cursor == '0' then
  -- The old layout's per-minute counters ('f:<n>' holding JSON is group "<n>"'s flow state).
  local old, flow = {}, {}
  for slot = 0, 59 do
    old[#old + 1] = 'c:' .. slot
    old[#old + 1] = 'r:' .. slot
    flow[#flow + 1] = 'f:' .. slot
  end
  for slot, raw in ipairs(redis.call('HMGET', M.key, unpack(flow))) do
    if raw and string.byte(raw, 1) ~= 123 then old[#old + 1] = flow[slot] end
  end
  redis.call('HDEL', M.key, unpack(old))
end
saveMeta(M)
return { 1, page[1], {}, reindexed, offered, dueReport(M, now) }
