-- Reserving ready jobs. Needs a table K of keys: jobs,
-- ready, prioritized, active, held, pausedGroups, starts, debounce, expiring. Touches no group key:
-- `ready` and `prioritized` hold the heads (offered jobs) of groups, and a leased job stays in
-- its group zset.

-- @include job
-- @include meta
-- @include totals
-- @include flow
-- @include debounce
-- @include bytes
-- @include expiry
-- @include events
-- @include batch

local PAUSED_FOREVER = '+inf'
local MAX_EXAMINED = 1000 -- due heads one call looks at, at most: paused ones are skipped
-- The queue rate limit's start times are trimmed once per this many starts (between trims the
-- window is counted with ZCOUNT, so stale entries cost memory only).
local STARTS_TRIM_EVERY = 100

-- How many deliveries the queue's rate limit lets start now (math.huge without one). A full
-- window holds the queue's dispatch until the start that must leave it first has left.
local function rateRoom(K, M, now)
  local rate = M.cfg.rateLimit
  if type(rate) ~= 'table' then return math.huge end
  local since = '(' .. int(now - rate.periodMs)
  local used = redis.call('ZCOUNT', K.starts, since, '+inf')
  if used < rate.max then return rate.max - used end
  local leaving = redis.call('ZRANGEBYSCORE', K.starts, since, '+inf', 'WITHSCORES', 'LIMIT', used - rate.max, 1)
  local at = tonumber(leaving[2]) + rate.periodMs
  metaSet(M, 'hold', int(at))
  noteTimer(M, at)
  return 0
end

local function noteStarts(K, M, now, members)
  local rate = M.cfg.rateLimit
  if type(rate) ~= 'table' or #members == 0 then return end
  local args = {}
  for _, m in ipairs(members) do
    args[#args + 1] = now
    args[#args + 1] = m
  end
  redis.call('ZADD', K.starts, unpack(args))
  local since = metaNum(M, 'rs') + #members
  if since >= STARTS_TRIM_EVERY then
    redis.call('ZREMRANGEBYSCORE', K.starts, '-inf', now - rate.periodMs)
    since = 0
  end
  metaSet(M, 'rs', int(since))
end

-- Reads the given group fields of the given groups in one command (reserve learns its groups
-- only from the records it reads): flow state and limits, a batch's followers.
local function prefetchGroups(M, groups, prefixes)
  local fields, seen = {}, {}
  for _, g in ipairs(groups) do
    for _, prefix in ipairs(prefixes) do
      local f = prefix .. g
      if M.v[f] == nil and not seen[f] then
        seen[f] = true
        fields[#fields + 1] = f
      end
    end
  end
  if #fields == 0 then return end
  for i, value in ipairs(redis.call('HMGET', M.key, unpack(fields))) do M.v[fields[i]] = value or false end
end

-- Leases jobs for up to `n` deliveries: due heads by priority (highest first), then oldest first
-- (G5), never more jobs than the config's concurrency in flight (G6: meta's `active` count) nor
-- than the queue's rate limit and a 429's hold allow. A one-job group is in `ready` only while it
-- has no lease (G1); a flow group has at most its concurrency offered or leased (flow.lua). Groups
-- met here that are paused are parked in `held` and take no slot. On a batch queue a one-job
-- group's head takes the ready jobs behind it along, up to maxSize in all (batch.lua): one
-- delivery, n deliveries per call.
-- Returns a list of {id, state JSON, data, lease deadline, 'm', lease token, message id, position}
-- ('m': the job is in its group zset, see finish.lua; the message id: meta.lua messageIdFor;
-- position: 0 for a delivery's first job, i for the i-th behind it in its batch). Each lease is
-- an `active` event (events.lua) while events are wanted.
local function reserveJobs(K, M, n, now)
  local cfg = M.cfg
  local batch = Batch.config(M)
  -- Jobs this call may lease: one per delivery, or on a batch queue what the concurrency allows.
  local room = batch and cfg.concurrency - metaNum(M, 'active') or math.min(n, cfg.concurrency - metaNum(M, 'active'))
  if metaNum(M, 'ready') == 0 then return {} end
  if room <= 0 then
    -- Every lease notes its deadline as a timer, so leases without a timer are a count that
    -- drifted (a script that failed half way): the tick that comes now sets it right (tick.lua).
    if not M.v.timer and metaNum(M, 'active') > 0 then noteTimer(M, now) end
    return {}
  end
  local hold = metaNum(M, 'hold')
  if hold > now then
    noteTimer(M, hold)
    return {}
  end
  room = math.min(room, rateRoom(K, M, now))
  if room <= 0 then return {} end
  local pausedGroups = metaNum(M, 'pausedGroups')
  local cutoff = now - cfg.orderingWindowMs -- a head is due once orderMs + window <= now
  -- Where heads come from, in the order they start: priorities above 0, 0, below 0.
  local sources = { { key = K.ready, min = '-inf', max = cutoff } }
  if metaGet(M, 'prio') then
    table.insert(sources, 1, { key = K.prioritized, min = '-inf', max = '(0', ranked = true })
    sources[3] = { key = K.prioritized, min = '(0', max = '+inf', ranked = true }
  end
  local examined, out, leases, starts, earliest = 0, {}, {}, {}, nil
  local removed, heads = 0, 0
  local started = {} -- entries of TTL jobs that start now leave `expiring` (expiry.lua)
  -- Leases job `id` of `group` (its record `raw`, its state decoded) as `position` of its
  -- delivery, until `deadline` (default: its own timeout's).
  local function lease(id, raw, state, group, position, deadline)
    if state.x then started[#started + 1] = delayedMember(id, group) end
    local nl = string.find(raw, '\n', 1, true)
    local dataAt = nl + 1 -- past the history line, if any (job.lua)
    if state.h then dataAt = string.find(raw, '\n', dataAt, true) + 1 end
    deadline = deadline or now + leaseMsOf(state, cfg)
    observeWait(M, state, now)
    local token = leaseToken(M, id, state)
    local member = leaseMember(token, id, group)
    leases[#leases + 1] = deadline
    leases[#leases + 1] = member
    starts[#starts + 1] = member
    releaseDebounce(K, id, state) -- started: its debounce key makes a new job
    countWaiting(M, id, -1, #raw - dataAt + 1) -- it waits no more (bytes.lua)
    out[#out + 1] = { id, string.sub(raw, 1, nl - 1), string.sub(raw, dataAt), deadline, 'm', token, messageIdFor(M, id, state), position }
    noteEvent(M, 'active', id, group, 'active', (state.a or 0) + 1, now)
    if not earliest or deadline < earliest then earliest = deadline end
    return deadline
  end
  -- The jobs right behind a batch's head (leased at `deadline`), while they follow it in order, are
  -- ready and fit: its followers as the group's last change wrote them (batch.lua), checked.
  local function leaseFollowers(group, head, deadline)
    local ids = Batch.followers(M, group)
    local count = math.min(#ids, batch.maxSize - 1, room - #out)
    local sent = 1
    if count > 0 then
      local list = {}
      for j = 1, count do list[j] = ids[j] end
      local raws = redis.call('HMGET', K.jobs, unpack(list))
      local before = head
      for j = 1, count do
        local raw = raws[j]
        local state = raw and cjson.decode(string.sub(raw, 1, string.find(raw, '\n', 1, true) - 1))
        -- (A job with a timeoutMs of its own other than the head's starts the next batch: a
        -- batch has one lease, as long as its head's.)
        if not state or state.st or state.g ~= group or pastDeadline(state, now) or state.o > cutoff
          or state.o < before.o or (state.o == before.o and state.s <= before.s) or state.to ~= head.to then break end
        -- One lease deadline for the batch, the head's: heartbeats and lapses find its jobs by it.
        lease(list[j], raw, state, group, j, deadline)
        before, sent = state, sent + 1
      end
    end
    Batch.sent(M, group, sent)
  end
  -- Whether this head, of `group`, must wait for room: it starts no delivery that cannot take
  -- its whole batch while another one is out or leased now (a cut batch costs a delivery all the
  -- same); with nothing out, it goes with what fits.
  local function waitsForRoom(group, flows)
    if #out >= room or heads >= n then return true end
    if not batch or (flows and isFlow(M, group)) or (#out == 0 and metaNum(M, 'active') == 0) then return false end
    return room - #out < 1 + math.min(#Batch.followers(M, group), batch.maxSize - 1)
  end
  local stopped = false
  for _, source in ipairs(sources) do
    local offset, taken = 0, {}
    repeat
      local want = math.min(room - #out, n - heads)
      local found = redis.call('ZRANGEBYSCORE', source.key, source.min, source.max, 'LIMIT', offset, want)
      if #found == 0 then break end
      offset, examined = offset + #found, examined + #found
      local members, ids = {}, {}
      local firstTaken = #taken + 1 -- members[i] is taken[firstTaken + i - 1]
      for _, raw in ipairs(found) do
        -- A prioritized head is '<orderMs><member>': one inside the ordering window waits.
        if not source.ranked or tonumber(string.sub(raw, 1, 15)) <= cutoff then
          taken[#taken + 1] = raw
          local m = source.ranked and string.sub(raw, 16) or raw
          members[#members + 1] = m
          ids[#ids + 1] = idOf(m)
        end
      end
      if #ids > 0 then
        -- Records are split by hand rather than with decodeJob: the state is decoded, the data
        -- is passed on as it is.
        local raws = redis.call('HMGET', K.jobs, unpack(ids))
        local states, groups = {}, {}
        for i = 1, #ids do
          -- A head without a record (left by a script that failed half way) just leaves `ready`.
          local raw = raws[i]
          states[i] = raw and cjson.decode(string.sub(raw, 1, string.find(raw, '\n', 1, true) - 1))
          groups[i] = states[i] and states[i].g or ''
        end
        local flows = flowsPossible(M)
        local prefixes = flows and { 'f:', 'l:' } or {}
        if batch then prefixes[#prefixes + 1] = 'b:' end
        if #prefixes > 0 then prefetchGroups(M, groups, prefixes) end
        local paused = {}
        if pausedGroups > 0 then paused = redis.call('SMISMEMBER', K.pausedGroups, unpack(groups)) end

        for i, m in ipairs(members) do
          local state, group = states[i], groups[i]
          if state and waitsForRoom(group, flows) then
            -- This head and the ones after it stay offered, for a call with room.
            for _ = firstTaken + i - 1, #taken do table.remove(taken) end
            stopped = true
            break
          end
          local F = state and flows and flowState(M, group)
          if F then F.o = math.max(0, F.o - 1) end -- offered no more: leased or parked
          if state and paused[i] == 1 then
            redis.call('ZADD', K.held, PAUSED_FOREVER, group)
            if F then
              table.remove(F.t, indexOf(F.t, m) or #F.t + 1)
              F.h = 'paused'
            end
          elseif state and pastDeadline(state, now) then
            -- Never delivered: its group waits in `held` until the tick has expired it (the tick
            -- declares the group's key, this call does not), then offers the next job.
            if F then table.remove(F.t, indexOf(F.t, m) or #F.t + 1) end
            if not (F and F.h) then -- a flow group held already keeps its hold
              redis.call('ZADD', K.held, now, group)
              if F then F.h = now end
            end
            noteTimer(M, now)
          elseif state then
            local deadline = lease(ids[i], raws[i], state, group, 0)
            heads = heads + 1
            if F then
              local _, rate = groupLimitsOf(M, group)
              if rate then F.r[#F.r + 1] = now end
            end
            if batch and not (flows and isFlow(M, group)) then leaseFollowers(group, state, deadline) end
          end
        end
      end
    until stopped or #out >= room or heads >= n or examined >= MAX_EXAMINED or #found < want
    if #taken > 0 then removed = removed + redis.call('ZREM', source.key, unpack(taken)) end
    if stopped or #out >= room or heads >= n or examined >= MAX_EXAMINED then break end
  end

  metaAdd(M, 'ready', -removed)
  dropExpiries(K, started)
  if earliest then
    redis.call('ZADD', K.active, unpack(leases))
    metaAdd(M, 'active', #out)
    noteTimer(M, earliest) -- a lease's deadline is a timer of the queue (see tick.lua)
    noteStarts(K, M, now, starts)
  end
  for group, F in pairs(M.flow or {}) do saveFlow(M, group, F) end
  return out
end
