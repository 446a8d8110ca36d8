-- A job's attempt history: its last HISTORY_SIZE attempts, oldest first, kept in its record
-- (job.lua: the line after the state, in `state.h` as JSON text) so that only GET of the job
-- decodes it. A job that never ended an attempt has none and pays no byte for it. Each entry is
-- [attempt, startedAt, finishedAt, ended, HTTP status (0: none), error?, batch?] with ended 'c'
-- completed, 'f' failed, 'e' expired (the lease lapsed), 'x' cancelled; src/core/store/job-records.ts
-- names them for the API (an attempt's `outcome` there). `batch`: [its id, the job's index in
-- it, its size] when the attempt was a batch's (docs/batches.md); error is then null if none.

local HISTORY_SIZE = 10
-- An entry keeps the start of the attempt's error; the job's `e` keeps the last one in full.
local HISTORY_ERROR_BYTES = 500

-- The first `n` bytes of UTF-8 `text`, cut back to a character's start.
local function utf8Head(text, n)
  if #text <= n then return text end
  while n > 0 and string.byte(text, n + 1) >= 0x80 and string.byte(text, n + 1) < 0xC0 do n = n - 1 end
  return string.sub(text, 1, n)
end

-- Records the attempt that just ended (state.a counts it already) on the state.
local function noteAttempt(state, startedAt, ended, status, err, now, batch)
  local entries = state.h and cjson.decode(state.h) or {}
  local entry = { state.a, startedAt, now, ended, status or 0 }
  if err then entry[6] = utf8Head(err, HISTORY_ERROR_BYTES) end
  if batch then
    entry[6] = entry[6] or cjson.null
    entry[7] = batch
  end
  entries[#entries + 1] = entry
  if #entries > HISTORY_SIZE then table.remove(entries, 1) end
  state.h = cjson.encode(entries)
end
