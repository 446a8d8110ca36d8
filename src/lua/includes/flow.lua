-- Flow control of groups (docs/flow-control.md): concurrency per group above 1, and a rate
-- limit per group. A group runs as a "flow group" while its
-- effective concurrency (its own limits, meta 'l:<group>', else the config's groupConcurrency)
-- is above 1, or it has a rate limit, or it still has flow state from such a time (limits
-- lowered while jobs ran). Every other group keeps the one-job invariant of group.lua, at no
-- extra cost.
--
-- A flow group's state F lives in meta field 'f:<group>' (JSON), read with the group's other
-- meta fields (openMeta), so keeping it costs no command:
--   t: the members (group zset form) of its jobs that are taken: offered in `ready` or
--      `prioritized`, or leased. Jobs start in (orderMs, sequence) order, so the next ones to
--      offer are the first members of the group zset not in t. '?' stands for a lease of
--      unknown member (a solo lease met when the group became a flow group).
--   o: how many of t are offered, not yet leased (reserve counts them down);
--   h: held until (epoch ms), or 'paused': nothing is offered meanwhile (ph: the hold a pause
--      came during, kept for the resume, so a pause never shortens a backoff). The group is in `held`
--      with the same time, so the tick releases it. A retried or throttled job keeps its place
--      at the head by holding its group (nothing later may start before it);
--   r: start times (epoch ms) of its deliveries inside its rate window, oldest first.
-- meta 'flows' counts the groups with flow state, so that reserve reads none when it is 0.

-- @include meta

local function decodeLimits(raw)
  if not raw then return nil end
  return cjson.decode(raw)
end

-- The group's effective concurrency and rate limit ({max, periodMs} or nil).
local function groupLimitsOf(M, group)
  local cfg, own = M.cfg, decodeLimits(metaGet(M, 'l:' .. group))
  local n = (own and own.concurrency) or cfg.groupConcurrency or 1
  local rate = cfg.groupRateLimit
  if own and own.rateLimit ~= nil then rate = own.rateLimit end
  if type(rate) ~= 'table' then rate = nil end
  return n, rate
end

-- The group's stored flow state (JSON text), or false. Flow state is always a JSON object; any
-- other value is a per-minute counter the layout before issue 16 kept in the same field for
-- groups "0".."59" (meta.lua): it is treated as absent and deleted with the call's meta writes.
local function flowRaw(M, group)
  local field = 'f:' .. group
  local raw = metaGet(M, field)
  if raw and string.byte(raw, 1) ~= 123 then -- not '{'
    metaSet(M, field, false)
    -- The counter may have overwritten a flow group's state: flowOf rebuilds it (group.lua).
    M.lostFlow = M.lostFlow or {}
    M.lostFlow[group] = true
    return false
  end
  return raw
end

-- True when the group runs as a flow group (see above).
local function isFlow(M, group)
  if flowRaw(M, group) then return true end
  local n, rate = groupLimitsOf(M, group)
  return n > 1 or rate ~= nil
end

-- Whether any group of the queue may run as a flow group (reserve reads flow state only then).
local function flowsPossible(M)
  local cfg = M.cfg
  return (cfg.groupConcurrency or 1) > 1 or type(cfg.groupRateLimit) == 'table' or metaNum(M, 'flows') > 0
end

local function flowState(M, group)
  M.flow = M.flow or {}
  local F = M.flow[group]
  if F then return F end
  local raw = flowRaw(M, group)
  if raw then
    F = cjson.decode(raw)
    F.t, F.r, F.o = F.t or {}, F.r or {}, F.o or 0
    F.existed = true
  end
  M.flow[group] = F
  return F
end

-- Forgets the start times that left the rate window (all of them without a rate limit).
local function pruneStarts(F, rate, now)
  local keep, cutoff = {}, rate and now - rate.periodMs or math.huge
  for _, at in ipairs(F.r) do
    if at > cutoff then keep[#keep + 1] = at end
  end
  F.r = keep
end

-- Writes F back (deleting it once it holds nothing), and keeps meta 'flows'.
local function saveFlow(M, group, F)
  local empty = #F.t == 0 and F.o == 0 and not F.h and not F.ph and #F.r == 0
  if empty then
    metaSet(M, 'f:' .. group, false)
    if F.existed then metaAdd(M, 'flows', -1) end
    F.existed = false
  else
    metaSet(M, 'f:' .. group, cjson.encode({ t = F.t, o = F.o, h = F.h, ph = F.ph, r = F.r }))
    if not F.existed then metaAdd(M, 'flows', 1) end
    F.existed = true
  end
end

local function indexOf(list, value)
  for i, v in ipairs(list) do
    if v == value then return i end
  end
  return nil
end

local function padOrder(orderMs)
  return string.format('%015d', orderMs)
end

-- The member of a head in `prioritized`: its orderMs first, so that equal priorities list
-- oldest first (Redis orders equal scores by member), then its group-zset member.
local function prioritizedMember(orderMs, m)
  return padOrder(orderMs) .. m
end
