--[[ delete-queue: removes every key of a queue, one bounded step per call; the caller repeats
until it reports done. The first step hides the queue (its config goes), so nothing new is
enqueued or reserved while the rest is removed. Group zsets are found where the invariant keeps
them (ready heads, active jobs, held groups); jobs are read for their group before the jobs
hash goes, last.

KEYS[1]  meta           KEYS[2]  jobs        KEYS[3]  ready       KEYS[4]  active
KEYS[5]  held           KEYS[6]  delayed     KEYS[7]  completed   KEYS[8]  failed
KEYS[9]  paused-groups  KEYS[10] repeats     KEYS[11] repeat-due

ARGV[1] step: at most this many groups per call

Returns {1, done 0|1}
Errors  {-1} QUEUE_NOT_FOUND (no such queue, and no deletion under way)
]]
-- @include job

local prefix, step = string.sub(KEYS[1], 1, -5), tonumber(ARGV[1])
if redis.call('HEXISTS', KEYS[1], 'deleting') == 0 then
  if redis.call('HDEL', KEYS[1], 'config') == 0 then return { -1 } end
  redis.call('HSET', KEYS[1], 'deleting', '1')
end

local function dropGroupOfJob(id)
  local raw = redis.call('HGET', KEYS[2], id)
  if raw then redis.call('UNLINK', groupKeyOf(prefix, decodeJob(raw).g)) end
end
local left = step
for _, source in ipairs({ KEYS[3], KEYS[4], KEYS[5] }) do
  if left > 0 then
    local popped = redis.call('ZPOPMIN', source, left)
    left = left - #popped / 2
    for i = 1, #popped, 2 do
      local m = popped[i]
      if source == KEYS[5] then
        redis.call('UNLINK', groupKeyOf(prefix, m))
      elseif source == KEYS[4] then
        dropGroupOfJob(m)
      elseif m ~= TIMERS then
        dropGroupOfJob(idOf(m))
      end
    end
  end
end
if left <= 0 then return { 1, 0 } end
-- UNLINK frees big values off the main thread, so this stays cheap however many jobs remain.
redis.call('UNLINK', KEYS[2], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[1])
return { 1, 1 }
