-- The dedup window (docs/flow-control.md#dedup-window): the id of a job its producer named
-- (state field `i`) stays known for the queue's dedupWindowMs after the job ends, whatever is
-- kept of the job itself. K needs dedup. The ids a call ends are
-- gathered in its batch (group.lua) and remembered by flushBatch with one ZADD.
--
-- `dedup` zset: member the id, score expiry * 4 + how the job ended (ENDED_CODE: 0..3, and 3.5
-- for `expired`, which came after the format; scores stay exact, being below 2^45), so that one
-- ZSCORE tells whether the id is still known and what to answer. meta `dedup` counts its
-- members (a queue that never remembered an id looks nothing up); meta `dedupTrimAt` is when
-- the next end of a job trims expired members.

-- @include job
-- @include meta

-- What a stored config without the field means (src/protocol/config.ts).
local DEFAULT_DEDUP_WINDOW_MS = 300000
-- Expired members go at most this long after their expiry, while jobs keep ending: one trim
-- per minute costs nothing per job, and the set never holds more than a window's ends.
local DEDUP_TRIM_MS = 60000
local ENDED_CODE = { completed = 0, failed = 1, removed = 2, cancelled = 3, expired = 3.5 }
local ENDED = {}
for name, code in pairs(ENDED_CODE) do ENDED[code] = name end

-- Notes in batch B that job `id`, which its producer named, ended as `ended` (a key of ENDED_CODE).
local function noteEnded(B, id, ended, now)
  local window = B.M.cfg.dedupWindowMs or DEFAULT_DEDUP_WINDOW_MS
  if window == 0 then return end
  B.ended = B.ended or {}
  local code = ENDED_CODE[ended]
  local score = (now + window) * 4 + code
  B.ended[#B.ended + 1] = code == 3.5 and string.format('%.1f', score) or int(score)
  B.ended[#B.ended + 1] = id
end

-- Remembers the ids noted in `ended` ({score, id, ...}), and trims expired ones.
local function rememberEnded(K, M, ended, now)
  metaAdd(M, 'dedup', redis.call('ZADD', K.dedup, unpack(ended)))
  if now < metaNum(M, 'dedupTrimAt') then return end
  metaAdd(M, 'dedup', -redis.call('ZREMRANGEBYSCORE', K.dedup, '-inf', int(now * 4 + 3)))
  metaSet(M, 'dedupTrimAt', int(now + DEDUP_TRIM_MS))
end

-- The state a remembered id answers with (its ZSCORE), or nil: unknown, or its window passed.
local function endedStateOf(score, now)
  if not score then return nil end
  score = tonumber(score)
  local code = score % 4
  if (score - code) / 4 <= now then return nil end -- expired, not trimmed yet
  return ENDED[code]
end

-- The ended state of each job of an enqueue whose id is remembered: {i -> state}. Only ids the
-- producer named are looked up, in one command, and only while the queue remembers any.
local function rememberedEnds(K, M, ids, states, now)
  local found = {}
  if metaNum(M, 'dedup') == 0 then return found end
  local named, at = {}, {}
  for i, state in ipairs(states) do
    if state.i then
      named[#named + 1] = ids[i]
      at[#named] = i
    end
  end
  if #named == 0 then return found end
  local scores = #named == 1 and { redis.call('ZSCORE', K.dedup, named[1]) } or redis.call('ZMSCORE', K.dedup, unpack(named))
  for j, score in ipairs(scores) do found[at[j]] = endedStateOf(score, now) end
  return found
end
