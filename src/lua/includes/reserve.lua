-- Reserving ready jobs. Needs job.lua and a table K of keys: jobs, ready, active, held,
-- pausedGroups.

local PAUSED_FOREVER = '+inf'

-- Leases up to `n` jobs, oldest group head first (G5), never more than `cfg.concurrency` in
-- flight (G6), one per group (G1: a group is in `ready` only while it has no lease).
-- `pausedGroups` > 0 means some groups are paused: those met here are parked in `held` and do
-- not take a slot.
-- Returns a list of {id, state JSON, data, lease deadline}.
local function reserveJobs(K, cfg, pausedGroups, n, now)
  n = math.min(n, cfg.concurrency)
  -- Due heads only (orderMs + window <= now), oldest first. One extra entry is read because the
  -- ~timers marker may sit among them (it is never taken), and a few more when paused groups
  -- may be met (they are parked, not counted). Reading heads before counting the active jobs
  -- makes an empty queue cost one command here.
  local extra = pausedGroups > 0 and math.min(pausedGroups, 100) or 0
  local cutoff = now - cfg.orderingWindowMs
  local candidates = redis.call('ZRANGEBYSCORE', K.ready, '-inf', cutoff, 'LIMIT', 0, n + 1 + extra)
  if #candidates == 0 then return {} end
  local room = math.min(n, cfg.concurrency - redis.call('ZCARD', K.active))
  if room <= 0 then return {} end

  local taken, out, leases, earliest = {}, {}, {}, nil
  for _, m in ipairs(candidates) do
    if #out == room then break end
    if m ~= TIMERS then
      taken[#taken + 1] = m
      local id = idOf(m)
      local raw = redis.call('HGET', K.jobs, id)
      local nl = string.find(raw, '\n', 1, true)
      local stateJson = string.sub(raw, 1, nl - 1)
      local state = cjson.decode(stateJson)
      if pausedGroups > 0 and redis.call('SISMEMBER', K.pausedGroups, state.g) == 1 then
        redis.call('ZADD', K.held, PAUSED_FOREVER, state.g)
      else
        local deadline = now + (state.to or cfg.timeoutMs) + 5000
        leases[#leases + 1] = deadline
        leases[#leases + 1] = id
        out[#out + 1] = { id, stateJson, string.sub(raw, nl + 1), deadline }
        if not earliest or deadline < earliest then earliest = deadline end
      end
    end
  end
  if #taken > 0 then redis.call('ZREM', K.ready, unpack(taken)) end
  if earliest then
    redis.call('ZADD', K.active, unpack(leases))
    noteTimer(K.ready, earliest)
  end
  return out
end
