--[[ retry-job: sends a failed job back to its group as waiting, with its attempts reset.
It keeps its orderMs, so it runs before later jobs of its group (G2).

KEYS[1] meta    hash  config
KEYS[2] jobs    hash  id -> job record
KEYS[3] ready   zset  idle group heads
KEYS[4] active  zset  leased job ids
KEYS[5] failed  zset  kept failed ids

ARGV[1] id
ARGV[2] seed (random hex, for a new lease token)

Returns {1, {id, state JSON, data, state, startedAt, expiresAt, maxAttempts}}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4} INVALID_STATE (not failed)
]]
-- @include job
-- @include group
-- @include job-ops
-- @include view

local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], prefix = string.sub(KEYS[1], 1, -5) }
local id = ARGV[1]
local cfg, raw, err = loadJob(KEYS[1], K.jobs, id)
if err then return err end
local state, data = decodeJob(raw)
if state.st ~= 'failed' then return { -4 } end
redis.call('ZREM', KEYS[5], id)
state.a, state.e, state.f, state.sa = 0, nil, nil, nil
state.t = tokenFor(ARGV[2], id, 0)
local B = newBatch()
local record = attachWaiting(K, B, id, state, data)
flushBatch(K, B)
return { 1, jobView(K, cfg, id, record) }
