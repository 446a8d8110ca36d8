--[[ put-queue: creates a queue or replaces its whole config.

KEYS[1] meta   hash  config, paused flag, enqueue sequence
KEYS[2] ready  zset  holds the ~timers marker

ARGV[1] now (epoch ms)
ARGV[2] config JSON (validated and defaulted by the caller)

Returns {1, created 0|1, previous config JSON or ''} (the caller unindexes its publish tokens)
Errors  {-8} the queue is still being deleted (the caller finishes that first)
]]
-- @include job

if redis.call('HEXISTS', KEYS[1], 'deleting') == 1 then return { -8 } end
local previous = redis.call('HGET', KEYS[1], 'config')
local created = redis.call('HSET', KEYS[1], 'config', ARGV[2])
-- The next tick takes a full pass: a lower keepCompleted/keepFailed trims retention there.
noteTimer(KEYS[2], tonumber(ARGV[1]))
return { 1, created, previous or '' }
