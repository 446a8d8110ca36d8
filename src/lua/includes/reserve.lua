-- Reserving ready jobs. Needs job.lua and a table K of keys: jobs, ready, active, held,
-- pausedGroups.

local PAUSED_FOREVER = '+inf'

-- Leases up to `n` jobs, oldest group head first (G5), never more than `cfg.concurrency` in
-- flight (G6), one per group (G1: a group is in `ready` only while it has no lease).
-- `pausedGroups` > 0 means some groups are paused: those met here are parked in `held` and do
-- not take a slot. Costs a fixed number of commands per call, whatever `n`.
-- Returns a list of {id, state JSON, data, lease deadline}.
local function reserveJobs(K, cfg, pausedGroups, n, now)
  n = math.min(n, cfg.concurrency)
  -- Due heads only (orderMs + window <= now), oldest first. One extra entry is read because the
  -- ~timers marker may sit among them (it is never taken), and a few more when paused groups
  -- may be met. Reading heads before counting the active jobs makes an empty queue cost one
  -- command here.
  local extra = pausedGroups > 0 and math.min(pausedGroups, 100) or 0
  local cutoff = now - cfg.orderingWindowMs
  local candidates = redis.call('ZRANGEBYSCORE', K.ready, '-inf', cutoff, 'LIMIT', 0, n + 1 + extra)
  if #candidates == 0 then return {} end
  local room = math.min(n, cfg.concurrency - redis.call('ZCARD', K.active))
  if room <= 0 then return {} end
  local members, ids = {}, {}
  for _, m in ipairs(candidates) do
    if m ~= TIMERS and #members < room + extra then
      members[#members + 1] = m
      ids[#ids + 1] = idOf(m)
    end
  end
  if #members == 0 then return {} end

  local raws = redis.call('HMGET', K.jobs, unpack(ids))
  local states, groups = {}, {}
  for i, raw in ipairs(raws) do
    states[i] = cjson.decode(string.sub(raw, 1, string.find(raw, '\n', 1, true) - 1))
    groups[i] = states[i].g
  end
  local paused = {}
  if pausedGroups > 0 then paused = redis.call('SMISMEMBER', K.pausedGroups, unpack(groups)) end

  local taken, leases, out, earliest = {}, {}, {}, nil
  for i, m in ipairs(members) do
    if #out == room then break end
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
  redis.call('ZREM', K.ready, unpack(taken))
  if earliest then
    redis.call('ZADD', K.active, unpack(leases))
    noteTimer(K.ready, earliest)
  end
  return out
end
