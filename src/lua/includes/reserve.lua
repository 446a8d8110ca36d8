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

-- Reads the flow state and limits of the given groups in one command (reserve learns its
-- groups only from the records it reads).
local function prefetchFlows(M, groups)
  local fields, seen = {}, {}
  for _, g in ipairs(groups) do
    for _, f in ipairs({ 'f:' .. g, 'l:' .. g }) do
      if M.v[f] == nil and not seen[f] then
        seen[f] = true
        fields[#fields + 1] = f
      end
    end
  end
  if #fields == 0 then return end
  for i, value in ipairs(redis.call('HMGET', M.key, unpack(fields))) do M.v[fields[i]] = value or false end
end

-- Leases up to `n` jobs: due heads by priority (highest first), then oldest first (G5), never
-- more than the config's concurrency in flight (G6: meta's `active` count) nor what the queue's
-- rate limit and a 429's hold allow. A one-job group is in `ready` only while it has no lease
-- (G1); a flow group has at most its concurrency offered or leased (flow.lua). Groups met here
-- that are paused are parked in `held` and take no slot.
-- Returns a list of {id, state JSON, data, lease deadline, 'm', lease token, message id} ('m': the
-- job is in its group zset, see finish.lua; the message id: meta.lua messageIdFor). Each lease is
-- an `active` event (events.lua) while events are wanted.
local function reserveJobs(K, M, n, now)
  local cfg = M.cfg
  local room = math.min(n, cfg.concurrency - metaNum(M, 'active'))
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
  local removed = 0
  local started = {} -- entries of TTL jobs that start now leave `expiring` (expiry.lua)
  for _, source in ipairs(sources) do
    local offset, taken = 0, {}
    repeat
      local want = room - #out
      local found = redis.call('ZRANGEBYSCORE', source.key, source.min, source.max, 'LIMIT', offset, want)
      if #found == 0 then break end
      offset, examined = offset + #found, examined + #found
      local members, ids = {}, {}
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
        if flows then prefetchFlows(M, groups) end
        local paused = {}
        if pausedGroups > 0 then paused = redis.call('SMISMEMBER', K.pausedGroups, unpack(groups)) end

        for i, m in ipairs(members) do
          local state, group = states[i], groups[i]
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
            if state.x then started[#started + 1] = delayedMember(ids[i], group) end
            local raw = raws[i]
            local nl = string.find(raw, '\n', 1, true)
            local dataAt = nl + 1 -- past the history line, if any (job.lua)
            if state.h then dataAt = string.find(raw, '\n', dataAt, true) + 1 end
            local deadline = now + leaseMsOf(state, cfg)
            observeWait(M, state, now)
            local token = leaseToken(M, ids[i], state)
            local member = leaseMember(token, ids[i], group)
            leases[#leases + 1] = deadline
            leases[#leases + 1] = member
            starts[#starts + 1] = member
            if F then
              local _, rate = groupLimitsOf(M, group)
              if rate then F.r[#F.r + 1] = now end
            end
            releaseDebounce(K, ids[i], state) -- started: its debounce key makes a new job
            countWaiting(M, ids[i], -1, #raw - dataAt + 1) -- it waits no more (bytes.lua)
            out[#out + 1] = { ids[i], string.sub(raw, 1, nl - 1), string.sub(raw, dataAt), deadline, 'm', token, messageIdFor(M, ids[i], state) }
            noteEvent(M, 'active', ids[i], group, 'active', (state.a or 0) + 1, now)
            if not earliest or deadline < earliest then earliest = deadline end
          end
        end
      end
    until #out >= room or examined >= MAX_EXAMINED or #found < want
    if #taken > 0 then removed = removed + redis.call('ZREM', source.key, unpack(taken)) end
    if #out >= room or examined >= MAX_EXAMINED then break end
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
