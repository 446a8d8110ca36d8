-- A job brought back into its group by hand, as waiting now: promote-job (a delayed job) and
-- retry-job (a failed one). Both load and check the job alike, take it out of the zset that held
-- it, and put it in its group with one batch; only that zset and what the job forgets differ,
-- and those stay in each script. K needs jobs, ready, prioritized, held, active.

-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include job-ops
-- @include view

-- Job `id` when it is in state `from` and in `group`, the group the caller declared (its key is
-- the only group zset the script may touch): M, its state and data, or nil, nil, nil and the
-- error reply to return (QUEUE_NOT_FOUND, JOB_NOT_FOUND, JOB_CHANGED_GROUP: call again with the
-- job's group declared, INVALID_STATE with the state it is in).
local function loadToRejoin(metaKey, K, id, group, from)
  local M, raw, err = loadJob(metaKey, K.jobs, id, { groupField(group) })
  if err then return nil, nil, nil, err end
  local state, data = decodeJob(raw)
  if state.g ~= group then return nil, nil, nil, { JOB_CHANGED_GROUP, state.g } end
  if state.st ~= from then return nil, nil, nil, { INVALID_STATE, jobState(K, M, id, state) } end
  return M, state, data
end

-- Puts the job into its group (`groupKey`) as waiting now, writes the batch and meta, and returns
-- the script's reply: {1, job view (view.lua), dueAt}.
local function rejoinGroup(K, M, groupKey, id, state, data, now)
  local B = newBatch(M, now)
  local record = attachWaiting(K, B, groupKey, id, state, data)
  flushBatch(K, B)
  saveMeta(M)
  return { 1, jobView(K, M, id, record, true), dueReport(M, now) }
end
