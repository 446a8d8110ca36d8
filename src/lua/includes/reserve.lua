-- Reserving ready jobs. Needs job.lua and meta.lua, and a table K of keys: jobs, ready, active,
-- held, pausedGroups, debounce. Touches no group key: `ready` holds each idle group's head
-- member, and a leased job stays in its group zset.

-- @include debounce

local PAUSED_FOREVER = '+inf'
local MAX_EXAMINED = 1000 -- due heads one call looks at, at most: paused ones are skipped

-- Leases up to `n` jobs, oldest group head first (G5), never more than the config's
-- concurrency in flight (G6: meta's `active` count), one per group (G1: a group is in `ready`
-- only while it has no lease). Groups met here that are paused are parked in `held` and take
-- no slot. Without paused groups this is a fixed number of commands, whatever `n`.
-- Returns a list of {id, state JSON, data, lease deadline, 'm', lease token} ('m': the job is in
-- its group zset, see finish.lua).
local function reserveJobs(K, M, n, now)
  local cfg = M.cfg
  local room = math.min(n, cfg.concurrency - metaNum(M, 'active'))
  if room <= 0 or metaNum(M, 'ready') == 0 then return {} end
  local pausedGroups = metaNum(M, 'pausedGroups')
  local cutoff = now - cfg.orderingWindowMs -- a head is due once orderMs + window <= now
  local examined = 0
  local taken, leases, out, earliest = {}, {}, {}, nil
  repeat
    local want = room - #out
    local members = redis.call('ZRANGEBYSCORE', K.ready, '-inf', cutoff, 'LIMIT', examined, want)
    if #members == 0 then break end
    examined = examined + #members
    local ids = {}
    for i, m in ipairs(members) do ids[i] = idOf(m) end
    -- Records are split by hand rather than with decodeJob: the state is decoded, the data is
    -- passed on as it is.
    local raws = redis.call('HMGET', K.jobs, unpack(ids))
    local states, groups = {}, {}
    for i, raw in ipairs(raws) do
      states[i] = cjson.decode(string.sub(raw, 1, string.find(raw, '\n', 1, true) - 1))
      groups[i] = states[i].g
    end
    local paused = {}
    if pausedGroups > 0 then paused = redis.call('SMISMEMBER', K.pausedGroups, unpack(groups)) end

    for i, m in ipairs(members) do
      taken[#taken + 1] = m
      if paused[i] == 1 then
        redis.call('ZADD', K.held, PAUSED_FOREVER, groups[i])
      else
        local raw = raws[i]
        local nl = string.find(raw, '\n', 1, true)
        local dataAt = nl + 1 -- past the history line, if any (job.lua)
        if states[i].h then dataAt = string.find(raw, '\n', dataAt, true) + 1 end
        local deadline = now + leaseMsOf(states[i], cfg)
        leases[#leases + 1] = deadline
        local token = leaseToken(M, ids[i], states[i])
        leases[#leases + 1] = leaseMember(token, ids[i], groups[i])
        out[#out + 1] = { ids[i], string.sub(raw, 1, nl - 1), string.sub(raw, dataAt), deadline, 'm', token }
        releaseDebounce(K, ids[i], states[i]) -- started: its debounce key makes a new job
        if not earliest or deadline < earliest then earliest = deadline end
      end
    end
  until #out >= room or examined >= MAX_EXAMINED or #members < want

  if #taken > 0 then
    redis.call('ZREM', K.ready, unpack(taken))
    metaAdd(M, 'ready', -#taken)
  end
  if earliest then
    redis.call('ZADD', K.active, unpack(leases))
    metaAdd(M, 'active', #out)
    noteTimer(M, earliest) -- a lease's deadline is a timer of the queue (see tick.lua)
  end
  return out
end
