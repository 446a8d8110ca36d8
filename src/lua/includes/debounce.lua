-- Debounce (docs/flow-control.md#debounce): enqueues that carry the same debounce key collapse into one
-- job until it starts (enqueue.lua). The `debounce` hash maps each key to the waiting or delayed
-- job it collapses into; the job's record keeps its key (`db`) and the latest start its first
-- enqueue allowed (`dx`, that enqueue + maxDelayMs). K needs debounce.

-- Frees the key of job `id` (it starts, or is removed or cancelled): the next enqueue with that
-- key makes a new job. A job that started before (and was retried) may find its key naming
-- another job by now: that mapping stays.
local function releaseDebounce(K, id, state)
  if state.db and redis.call('HGET', K.debounce, state.db) == id then redis.call('HDEL', K.debounce, state.db) end
end
