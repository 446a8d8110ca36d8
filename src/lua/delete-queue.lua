--[[ delete-queue: removes every key of a queue, one bounded step per call; the caller repeats
until it reports done. The first step hides the queue (its config goes), so nothing new is
enqueued or reserved while the rest is removed. Group zsets are found where the invariant keeps
them (ready heads, active jobs, held groups); jobs are read for their group before the jobs
hash goes, last.

KEYS[1]  meta           KEYS[2]  jobs        KEYS[3]  ready       KEYS[4]  active
KEYS[5]  held           KEYS[6]  delayed     KEYS[7]  completed   KEYS[8]  failed
KEYS[9]  paused-groups  KEYS[10] repeats     KEYS[11] repeat-due  KEYS[12] tick-lock
KEYS[13] metrics

ARGV[1] step: at most this many groups per call

Returns {1, done 0|1}
Errors  {-1} QUEUE_NOT_FOUND (no such queue, and no deletion under way)
]]
-- @include job

local metaKey, jobsKey, readyKey, activeKey, heldKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, step = string.sub(metaKey, 1, -5), tonumber(ARGV[1])
if redis.call('HEXISTS', metaKey, 'deleting') == 0 then
  if redis.call('HDEL', metaKey, 'config') == 0 then return { -1 } end
  redis.call('HSET', metaKey, 'deleting', '1')
end

local function dropGroupOfJob(id)
  local raw = redis.call('HGET', jobsKey, id)
  if raw then redis.call('UNLINK', groupKeyOf(prefix, decodeJob(raw).g)) end
end
-- Each source names groups its own way: ready by head member, active by job id, held by name.
local left = step
for _, source in ipairs({ readyKey, activeKey, heldKey }) do
  if left > 0 then
    local popped = redis.call('ZPOPMIN', source, left)
    left = left - #popped / 2
    for i = 1, #popped, 2 do
      local m = popped[i]
      if source == heldKey then
        redis.call('UNLINK', groupKeyOf(prefix, m))
      elseif source == activeKey then
        dropGroupOfJob(m)
      elseif m ~= TIMERS then
        dropGroupOfJob(idOf(m))
      end
    end
  end
end
if left <= 0 then return { 1, 0 } end
-- UNLINK frees big values off the main thread, so this stays cheap however many jobs remain.
redis.call('UNLINK', jobsKey, KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13], metaKey)
return { 1, 1 }
