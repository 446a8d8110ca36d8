-- Group bookkeeping. Invariant of a group that runs one job at a
-- time (a flow group, flow.lua, keeps its own): a group with jobs is in exactly one of
--   ready  (its head member, scored by the head's orderMs; a head with a priority other than 0
--          is in `prioritized` instead): idle, waiting to be reserved;
--   active (its one leased job);
--   held   (by group name, scored by the release time; +inf = paused and parked).
-- The group zset holds the group's waiting jobs and its leased one, except a job leased "solo":
-- enqueued to an empty group and leased in the same call, it never enters the zset (meta's
-- 'g:<group>' count still includes it). So a group whose count exceeds what its zset holds has
-- a solo lease, and is busy.
--
-- Changes to `ready`, new and deleted records are gathered in a batch B and written by
-- flushBatch in one command each, so a script that touches many jobs pays per call, not per
-- job. Entries waiting in B are looked at before `ready` itself, so later steps of the same
-- script see them.

-- @include job
-- @include meta
-- @include outcome
-- @include flow
-- @include dedup
-- @include batch

-- B.reserving: the caller reserves right after (it drains what became ready); otherwise a head
-- that is due now is a timer due now, so the scheduler drains it. B.ready holds the pending
-- head of each one-job group ({orderMs, member, priority, group}), B.offers the pending offers
-- of flow groups (the same). B.touched: groupKey -> group of one-job groups whose zset changed on
-- a batch queue (batch.lua refresh).
local function newBatch(M, now)
  return { M = M, now = now, reserving = false, ready = {}, offers = {}, minOrder = {}, fresh = {}, delayed = {}, deleted = {} }
end

-- The priorities of waiting members (0 for all while the queue never had a prioritized job);
-- `known` (optional): member -> priority of jobs whose records this batch has not written yet.
local function prioritiesOf(K, M, members, known)
  local out, ids, at = {}, {}, {}
  for i, m in ipairs(members) do
    out[i] = known and known[m] or 0
    if metaGet(M, 'prio') and not (known and known[m]) then
      ids[#ids + 1] = idOf(m)
      at[#ids] = i
    end
  end
  if #ids == 0 then return out end
  for j, raw in ipairs(redis.call('HMGET', K.jobs, unpack(ids))) do
    if raw then out[at[j]] = cjson.decode(string.sub(raw, 1, string.find(raw, '\n', 1, true) - 1)).pr or 0 end
  end
  return out
end

-- Writes what the batch gathered, one command per key, and keeps meta's `ready` count (heads
-- in `ready` and `prioritized`). A head that may not start yet (a future orderMs, or inside the
-- ordering window) is a timer: the queue must be drained when it comes due. K needs jobs,
-- ready, prioritized, when jobs were delayed delayed, when a job with a callback URL ended
-- outcomes and outcomeRecords (outcome.lua), and when a job with a given id ended dedup (dedup.lua).
local function flushBatch(K, B)
  if #B.fresh > 0 then redis.call('HSET', K.jobs, unpack(B.fresh)) end
  if #B.delayed > 0 then redis.call('ZADD', K.delayed, unpack(B.delayed)) end
  local plain, ranked = {}, {}
  local window = B.M.cfg.orderingWindowMs
  if B.touched then Batch.refresh(K, B, B.touched) end
  Batch.flushGroups(B)
  -- `batched`: a one-job group's head, which may wait for its batch to fill (batch.lua).
  local function place(entry, batched)
    local orderMs, m, priority = entry[1], entry[2], entry[3] or 0
    if priority ~= 0 then
      ranked[#ranked + 1] = -priority
      ranked[#ranked + 1] = prioritizedMember(orderMs, m)
    else
      if batched then orderMs = Batch.readyScore(B.M, entry[4], tonumber(orderMs)) end
      plain[#plain + 1] = orderMs
      plain[#plain + 1] = m
    end
    local dueAt = tonumber(orderMs) + window
    if dueAt > B.now then
      noteTimer(B.M, dueAt)
    elseif not B.reserving then
      noteTimer(B.M, B.now)
    end
  end
  for _, entry in pairs(B.ready) do place(entry, true) end
  for _, entry in ipairs(B.offers) do place(entry) end
  if #plain > 0 then metaAdd(B.M, 'ready', redis.call('ZADD', K.ready, unpack(plain))) end
  if #ranked > 0 then metaAdd(B.M, 'ready', redis.call('ZADD', K.prioritized, unpack(ranked))) end
  if #B.deleted > 0 then redis.call('HDEL', K.jobs, unpack(B.deleted)) end
  if B.outcomes then writeOutcomes(K, B) end -- jobs with a callback URL ended (finish.lua)
  if B.ended then rememberEnded(K, B.M, B.ended, B.now) end -- jobs with a given id ended (finish.lua)
  B.ended = nil
  for group, F in pairs(B.M.flow or {}) do saveFlow(B.M, group, F) end
  B.ready, B.offers, B.minOrder, B.fresh, B.delayed, B.deleted, B.touched = {}, {}, {}, {}, {}, {}, nil
end

-- Takes member `m` (score `orderMs`) of a one-job group out of `ready` or `prioritized`
-- (pending or written); true if it was the group's entry there. A pending entry replaced the
-- written one, so when one is pending the keys hold nothing else.
local function takeReady(K, B, groupKey, m, orderMs)
  local pending = B.ready[groupKey]
  if pending then
    if pending[2] ~= m then return false end
    B.ready[groupKey] = nil
    return true
  end
  local gone = redis.call('ZREM', K.ready, m)
  if gone == 0 and metaGet(B.M, 'prio') then gone = redis.call('ZREM', K.prioritized, prioritizedMember(orderMs, m)) end
  if gone == 0 then return false end
  metaAdd(B.M, 'ready', -1)
  return true
end

-- Holds a flow group until `at` (a retry, a throttle, its rate window): nothing is offered
-- before, and the tick releases it then. A paused group stays paused.
local function holdFlow(K, B, group, F, at)
  if F.h == 'paused' then return end
  if not F.h or at > F.h then F.h = at end
  redis.call('ZADD', K.held, F.h, group)
  noteTimer(B.M, F.h)
end

-- A flow group's state rebuilt from its keys alone: taken are its leases (one that is not in its
-- zset is '?') and its first members offered in `ready` or `prioritized`; its hold is its entry
-- in `held`. The starts of its rate window are kept from `old` (they are in no key). For a state
-- that was lost (an old per-minute counter overwrote it, flow.lua) and for repair.lua: about 6
-- commands, and `active` is read whole (at most the queue's concurrency).
local function rebuildFlow(K, B, groupKey, group, old)
  local M = B.M
  local F = { t = {}, o = 0, r = old and old.r or {}, ph = old and old.ph, existed = old and old.existed }
  local ids = {}
  for _, lease in ipairs(redis.call('ZRANGE', K.active, 0, -1)) do
    local id, owner = splitLease(lease)
    if owner == group then ids[#ids + 1] = id end
  end
  if #ids > 0 then
    local members = {}
    for i, raw in ipairs(redis.call('HMGET', K.jobs, unpack(ids))) do
      members[i] = raw and memberOf(decodeJob(raw).s, ids[i]) or '?'
    end
    for i, score in ipairs(redis.call('ZMSCORE', groupKey, unpack(members))) do
      F.t[#F.t + 1] = score and members[i] or '?'
    end
  end
  local n = groupLimitsOf(M, group)
  local head = redis.call('ZRANGE', groupKey, 0, n + #F.t - 1, 'WITHSCORES')
  for i = 1, #head, 2 do
    local m = head[i]
    if redis.call('ZSCORE', K.ready, m)
      or (metaGet(M, 'prio') and redis.call('ZSCORE', K.prioritized, prioritizedMember(tonumber(head[i + 1]), m))) then
      F.t[#F.t + 1] = m
      F.o = F.o + 1
    end
  end
  local hold = redis.call('ZSCORE', K.held, group)
  if hold then F.h = hold == 'inf' and 'paused' or tonumber(hold) end
  M.flow = M.flow or {}
  M.flow[group] = F
  return F
end

-- A flow group's state; a group that ran one job at a time until now gets it from what its
-- keys say (rare: its limits or the config just changed): its head is taken when it is offered
-- or leased, a solo lease is an unknown taken member, a held group stays held.
local function flowOf(K, B, groupKey, group)
  local M = B.M
  local F = flowState(M, group)
  if F then return F end
  if M.lostFlow and M.lostFlow[group] then return rebuildFlow(K, B, groupKey, group) end
  F = { t = {}, o = 0, r = {} }
  M.flow[group] = F
  if groupJobs(M, group) == 0 then return F end
  local hold = redis.call('ZSCORE', K.held, group)
  if hold then
    F.h = hold == 'inf' and 'paused' or tonumber(hold)
    return F
  end
  if groupJobs(M, group) > redis.call('ZCARD', groupKey) then
    F.t = { '?' }
    return F
  end
  local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
  local m = head[1]
  if not m then return F end
  local pending = B.ready[groupKey]
  if pending and pending[2] == m then
    B.ready[groupKey] = nil -- offered again below, as a flow offer
    F.t, F.o = { m }, 1
    B.offers[#B.offers + 1] = { tonumber(head[2]), m, pending[3], group }
  elseif redis.call('ZSCORE', K.ready, m) or (metaGet(M, 'prio') and redis.call('ZSCORE', K.prioritized, prioritizedMember(head[2], m))) then
    F.t, F.o = { m }, 1
  else
    local raw = redis.call('HGET', K.jobs, idOf(m))
    local state = raw and decodeJob(raw)
    if state and redis.call('ZSCORE', K.active, leaseMember(leaseToken(M, idOf(m), state), idOf(m), group)) then F.t = { m } end
  end
  return F
end

-- Takes a flow group's offered jobs back out of `ready` and `prioritized` (pending or written):
-- a job that must start before them (a retry, a throttled job, an earlier enqueue) is offered
-- first by the refill that follows.
local function pullOffered(K, B, groupKey, group, F)
  if F.o <= 0 then return end
  local M, pulled, kept = B.M, {}, {}
  for _, entry in ipairs(B.offers) do
    if entry[4] == group then pulled[entry[2]] = true else kept[#kept + 1] = entry end
  end
  B.offers = kept
  local written = {}
  for _, m in ipairs(F.t) do
    if m ~= '?' and not pulled[m] then written[#written + 1] = m end
  end
  if #written > 0 then
    local gone = {}
    for i, score in ipairs(redis.call('ZMSCORE', K.ready, unpack(written))) do
      if score then
        gone[#gone + 1] = written[i]
        pulled[written[i]] = true
      end
    end
    if #gone > 0 then metaAdd(M, 'ready', -redis.call('ZREM', K.ready, unpack(gone))) end
    if metaGet(M, 'prio') and #gone < #written then
      local orders = redis.call('ZMSCORE', groupKey, unpack(written))
      for i, m in ipairs(written) do
        if not pulled[m] and orders[i] then
          local pm = prioritizedMember(tonumber(orders[i]), m)
          if redis.call('ZREM', K.prioritized, pm) == 1 then
            pulled[m] = true
            metaAdd(M, 'ready', -1)
          end
        end
      end
    end
  end
  local keep = {}
  for _, m in ipairs(F.t) do
    if not pulled[m] then keep[#keep + 1] = m end
  end
  F.t, F.o = keep, 0
end

-- Offers a flow group's next jobs (the first members of its zset not taken), as many as its
-- concurrency and its rate limit allow now. A full rate window holds the group until the start
-- that must leave it first has left: offered jobs count as starting now, so a job offered and
-- started later still keeps every window within the limit.
local function refillGroup(K, B, groupKey, group, F, known)
  if F.h then return end
  local M, now = B.M, B.now
  local n, rate = groupLimitsOf(M, group)
  local room = n - #F.t
  if room <= 0 then return end
  if rate then
    pruneStarts(F, rate, now)
    local free = rate.max - #F.r - F.o
    if free <= 0 then
      local leaving = F.r[1 - free]
      if leaving then holdFlow(K, B, group, F, leaving + rate.periodMs) end
      return -- else offered jobs fill the window: their starts bring the group back here
    end
    room = math.min(room, free)
  end
  local taken = {}
  for _, m in ipairs(F.t) do taken[m] = true end
  local members = redis.call('ZRANGE', groupKey, 0, #F.t + room - 1, 'WITHSCORES')
  local picked, orders = {}, {}
  for i = 1, #members, 2 do
    if #picked == room then break end
    if not taken[members[i]] then
      picked[#picked + 1] = members[i]
      orders[#orders + 1] = tonumber(members[i + 1])
    end
  end
  local priorities = prioritiesOf(K, M, picked, known)
  for i, m in ipairs(picked) do
    F.t[#F.t + 1] = m
    B.offers[#B.offers + 1] = { orders[i], m, priorities[i], group }
  end
  F.o = F.o + #picked
end

-- Offers the group's next job(s) to `ready` (after a lease or a hold ended). A one-job group
-- with a batch out offers nothing: the batch's last end does (batch.lua); on a batch queue the
-- same read gives the head's followers.
local function advanceGroup(K, B, groupKey, group)
  if isFlow(B.M, group) then return refillGroup(K, B, groupKey, group, flowOf(K, B, groupKey, group)) end
  local batch = Batch.config(B.M)
  if batch and Batch.out(B.M, group) > 0 then return end
  Batch.flushGroups(B, groupKey)
  local head = redis.call('ZRANGE', groupKey, 0, batch and batch.maxSize - 1 or 0, 'WITHSCORES')
  if batch then Batch.noteHead(B.M, group, head) end
  if head[1] then B.ready[groupKey] = { head[2], head[1], prioritiesOf(K, B.M, { head[1] })[1], group } end
end

-- A held group's hold ended (its release time came, or it was resumed): offer its next jobs
-- (a batch still out offers them when it ends).
local function releaseGroup(K, B, groupKey, group)
  local F = isFlow(B.M, group) and flowOf(K, B, groupKey, group)
  if F and F.h ~= 'paused' then F.h = nil end
  Batch.holding(B.M, group, false)
  advanceGroup(K, B, groupKey, group)
end

-- A batch queue's one-job group whose zset changed: its followers are written anew at the flush.
-- (In the Batch table: enqueue.lua and tick.lua are near Lua's 200 locals.)
function Batch.touch(B, groupKey, group)
  if not Batch.config(B.M) then return end
  B.touched = B.touched or {}
  B.touched[groupKey] = group
end

-- Adds waiting job `m` (score `orderMs`, priority `priority`) to its group and keeps `ready`
-- pointing at the head.
local function addToGroup(K, B, groupKey, group, orderMs, m, priority)
  if priority and priority ~= 0 then metaSet(B.M, 'prio', '1') end
  if isFlow(B.M, group) then
    local F = flowOf(K, B, groupKey, group)
    addGroupJobs(B.M, group, 1)
    redis.call('ZADD', groupKey, orderMs, m)
    -- Sorting before a taken job (an earlier orderMs): offered ones step back for it.
    if F.o > 0 and redis.call('ZRANK', groupKey, m) < #F.t then pullOffered(K, B, groupKey, group, F) end
    return refillGroup(K, B, groupKey, group, F, { [m] = priority })
  end
  local before = groupJobs(B.M, group)
  addGroupJobs(B.M, group, 1)
  -- An enqueue adds its jobs of a group in one ZADD (B.link; batch.lua), written before a read.
  if B.link then Batch.link(B, groupKey, orderMs, m) else redis.call('ZADD', groupKey, orderMs, m) end
  Batch.touch(B, groupKey, group)
  local seq = string.sub(m, 1, 15)
  if before == 0 then -- an empty group: its only job is its head, and it is idle
    B.minOrder[groupKey] = { orderMs, seq }
    B.ready[groupKey] = { orderMs, m, priority, group }
    return
  end
  -- A job this batch already added sorts before ours: ours is not the head, nothing to check.
  -- (Members start with the 15-digit sequence, so comparing those digits orders equal orderMs.)
  local earliest = B.minOrder[groupKey]
  if earliest and (earliest[1] < orderMs or (earliest[1] == orderMs and earliest[2] < seq)) then return end
  B.minOrder[groupKey] = { orderMs, seq }
  Batch.flushGroups(B, groupKey)
  local head = redis.call('ZRANGE', groupKey, 0, 1, 'WITHSCORES')
  if head[1] ~= m then return end
  -- Ours is the new head. Nothing behind it: the group's other job is a solo lease, busy.
  if head[3] ~= nil and takeReady(K, B, groupKey, head[3], head[4]) then
    B.ready[groupKey] = { orderMs, m, priority, group } -- idle, with an earlier head now
  end -- else the group is active, held or parked: it moves on when that ends
end

-- Removes a waiting job's member from its group; if it was offered (an idle head), the next
-- one takes its place.
local function removeFromGroup(K, B, groupKey, group, m, orderMs)
  if isFlow(B.M, group) then
    local F = flowOf(K, B, groupKey, group)
    redis.call('ZREM', groupKey, m)
    addGroupJobs(B.M, group, -1)
    local at = indexOf(F.t, m)
    if at then -- offered: a waiting job is never leased
      pullOffered(K, B, groupKey, group, F)
    end
    if groupJobs(B.M, group) > 0 then refillGroup(K, B, groupKey, group, F) end
    return
  end
  Batch.flushGroups(B, groupKey)
  redis.call('ZREM', groupKey, m)
  addGroupJobs(B.M, group, -1)
  Batch.touch(B, groupKey, group)
  if takeReady(K, B, groupKey, m, orderMs) and groupJobs(B.M, group) > 0 then advanceGroup(K, B, groupKey, group) end
end
