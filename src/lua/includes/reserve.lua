-- Reserving ready jobs. Needs job.lua and a table K of keys: jobs, ready, active, held,
-- pausedGroups.

local PAUSED_FOREVER = '+inf'

-- Leases up to `n` jobs, oldest group head first (G5), never more than `cfg.concurrency` in
-- flight (G6), one per group (G1: a group is in `ready` only while it has no lease).
-- `pausedGroups` > 0 means some groups are paused: those met here are parked in `held`.
-- Returns a list of {id, state JSON, data, lease deadline}.
local function reserveJobs(K, cfg, pausedGroups, n, now)
  -- Due heads only (orderMs + window <= now), oldest first. One extra entry is read because the
  -- ~timers marker may sit among them; it is never taken. Reading them before counting the
  -- active jobs makes an empty queue cost one command here.
  n = math.min(n, cfg.concurrency)
  local cutoff = now - cfg.orderingWindowMs
  local candidates = redis.call('ZRANGEBYSCORE', K.ready, '-inf', cutoff, 'LIMIT', 0, n + 1)
  if #candidates == 0 then return {} end
  local room = math.min(n, cfg.concurrency - redis.call('ZCARD', K.active))
  local picked = {}
  for _, m in ipairs(candidates) do
    if m ~= TIMERS and #picked < room then picked[#picked + 1] = m end
  end
  if #picked == 0 then return {} end
  redis.call('ZREM', K.ready, unpack(picked))

  local jobs, groups = {}, {}
  for i, m in ipairs(picked) do
    local id = idOf(m)
    local raw = redis.call('HGET', K.jobs, id)
    local nl = string.find(raw, '\n', 1, true)
    local state = cjson.decode(string.sub(raw, 1, nl - 1))
    jobs[i] = { id, string.sub(raw, 1, nl - 1), string.sub(raw, nl + 1), state }
    groups[i] = state.g
  end
  local paused = {}
  if pausedGroups > 0 then
    paused = redis.call('SMISMEMBER', K.pausedGroups, unpack(groups))
  end

  local leases, out, earliest = {}, {}, nil
  for i, job in ipairs(jobs) do
    if paused[i] == 1 then
      redis.call('ZADD', K.held, PAUSED_FOREVER, groups[i])
    else
      local deadline = now + (job[4].to or cfg.timeoutMs) + 5000
      leases[#leases + 1] = deadline
      leases[#leases + 1] = job[1]
      out[#out + 1] = { job[1], job[2], job[3], deadline }
      if not earliest or deadline < earliest then earliest = deadline end
    end
  end
  if earliest then
    redis.call('ZADD', K.active, unpack(leases))
    noteTimer(K.ready, earliest)
  end
  return out
end
