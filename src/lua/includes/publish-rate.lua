-- The publish rate limits (docs/security.md#every-limit-and-its-default): fixed windows, each a
-- string key counting the jobs enqueued since its window opened and expiring when it closes.
-- Two windows may apply to one call: the client's (publishRateLimit, key `rate:<client>`) and
-- the token's, all its clients together (publishTokenRateLimit, key `token-rate:<hash>`). Both
-- keys live with the queue's root: an unpartitioned queue's enqueue checks them itself, a
-- partitioned queue's publish checks them at its root first (publish-rate.lua), so that a queue
-- of any number of partitions counts each client once. Checking only reads: a refusal writes
-- nothing.

-- @include errors

-- A limit as a config holds it: absent, the default; JSON null, none (nil here).
local function publishLimitOf(value, default)
  if value == nil then return default end
  if value == cjson.null then return nil end
  return value
end

-- Whether `n` more jobs fit in both windows. `windows`: {key, max, periodMs, name} for each
-- limit that applies (none: nothing to check, no command). Returns a refusal {RATE_LIMITED, ms
-- until the window closes, max, periodMs, name}, or nil and what takeRates needs. Reading costs
-- one MGET (and a PTTL when refused).
local function checkRates(windows, n)
  if #windows == 0 then return nil, nil end
  local keys = {}
  for i, w in ipairs(windows) do keys[i] = w.key end
  local counts = redis.call('MGET', unpack(keys))
  for i, w in ipairs(windows) do
    w.used, w.n = tonumber(counts[i]) or 0, n
    if w.used + n > w.max then
      local left = w.used > 0 and redis.call('PTTL', w.key) or -1
      return { RATE_LIMITED, left > 0 and left or w.periodMs, w.max, w.periodMs, w.name }, nil
    end
  end
  return nil, windows
end

-- Spends what checkRates allowed (one command per window): the first jobs of a window open it.
local function takeRates(R)
  if not R then return end
  for _, w in ipairs(R) do
    if w.used == 0 then
      redis.call('SET', w.key, w.n, 'PX', w.periodMs)
    else
      redis.call('INCRBY', w.key, w.n) -- keeps the key's expiry: the window does not move
    end
  end
end

-- The windows of a config's publish limits (`cfg`: the stored config, or the limits as a
-- partitioned queue's publish passes them).
local DEFAULT_PUBLISH_RATE = { max = 120, periodMs = 60000 }
local DEFAULT_PUBLISH_TOKEN_RATE = { max = 1200, periodMs = 60000 }

local function publishWindows(cfg, clientKey, tokenKey)
  local windows = {}
  local client = publishLimitOf(cfg.publishRateLimit, DEFAULT_PUBLISH_RATE)
  local token = publishLimitOf(cfg.publishTokenRateLimit, DEFAULT_PUBLISH_TOKEN_RATE)
  if client then windows[#windows + 1] = { key = clientKey, max = client.max, periodMs = client.periodMs, name = 'publishRateLimit' } end
  if token then windows[#windows + 1] = { key = tokenKey, max = token.max, periodMs = token.periodMs, name = 'publishTokenRateLimit' } end
  return windows
end
