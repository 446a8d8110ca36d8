-- Reserving ready jobs. Needs job.lua and a table K of keys: jobs, ready, active, held,
-- pausedGroups.

local PAUSED_FOREVER = '+inf'
local MAX_EXAMINED = 1000 -- due heads one call looks at, at most: paused ones are skipped

-- Leases up to `n` jobs, oldest group head first (G5), never more than `cfg.concurrency` in
-- flight (G6), one per group (G1: a group is in `ready` only while it has no lease).
-- `pausedGroups` > 0 means some groups are paused: those met here are parked in `held` and do
-- not take a slot. Without paused groups this is a fixed number of commands, whatever `n`.
-- Returns a list of {id, state JSON, data, lease deadline}.
local function reserveJobs(K, cfg, pausedGroups, n, now)
  n = math.min(n, cfg.concurrency)
  local cutoff = now - cfg.orderingWindowMs -- a head is due once orderMs + window <= now
  local room, examined = nil, 0
  local taken, leases, out, earliest = {}, {}, {}, nil
  repeat
    -- Due heads, oldest first, past those already looked at. One more than needed is read:
    -- the ~timers marker may sit among them (it is never taken).
    local want = (room or n) - #out
    local candidates = redis.call('ZRANGEBYSCORE', K.ready, '-inf', cutoff, 'LIMIT', examined, want + 1)
    if #candidates == 0 then break end
    -- Counting the active jobs only once a head is due makes an empty queue one command.
    room = room or math.min(n, cfg.concurrency - redis.call('ZCARD', K.active))
    if room <= #out then break end

    local members, ids = {}, {}
    for _, m in ipairs(candidates) do
      if #members == room - #out then break end
      examined = examined + 1 -- next round reads past this one (taken, or the marker)
      if m ~= TIMERS then
        members[#members + 1] = m
        ids[#ids + 1] = idOf(m)
      end
    end
    if #members == 0 then break end
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
        local deadline = now + leaseMsOf(states[i], cfg)
        leases[#leases + 1] = deadline
        leases[#leases + 1] = ids[i]
        out[#out + 1] = { ids[i], string.sub(raw, 1, nl - 1), string.sub(raw, nl + 1), deadline }
        if not earliest or deadline < earliest then earliest = deadline end
      end
    end
  until #out >= room or examined >= MAX_EXAMINED or #candidates <= want

  if #taken > 0 then redis.call('ZREM', K.ready, unpack(taken)) end
  if earliest then
    redis.call('ZADD', K.active, unpack(leases))
    noteTimer(K.ready, earliest)
  end
  return out
end
