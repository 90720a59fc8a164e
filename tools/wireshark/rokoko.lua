-- Rokoko Studio Live (Studio's JSON v3 stream to its plugins) for Wireshark
-- and tshark.
--
-- One datagram per frame of Studio's scene, UDP 14043 by default: JSON text
-- {"version":3,"fps":..,"scene":{"timestamp":..,"actors":[{"name":..,
-- "meta":{..},"body":{segment:{"position":..,"rotation":..}},"face":{..}}],
-- "props":[..]}}, or that text as one LZ4 frame (magic 04 22 4D 18) when
-- the stream's compression is on. This script names what mocap-tools reads
-- of plain frames (version, fps, timestamp, actor names, segment counts)
-- and hands the text to Wireshark's JSON dissector; an LZ4 frame is shown
-- as one, with its declared content size (Wireshark's Lua cannot inflate
-- LZ4: mocap-dump can). Found by content on any UDP port as well. It never
-- raises a Lua error.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local rokoko = Proto("rokoko", "Rokoko Studio Live")

local f = {
  kind = ProtoField.string("rokoko.kind", "Datagram kind"),
  version = ProtoField.double("rokoko.version", "Version"),
  fps = ProtoField.double("rokoko.fps", "Frames per second"),
  timestamp = ProtoField.double("rokoko.timestamp", "Scene timestamp (s)"),
  actor = ProtoField.string("rokoko.actor", "Actor"),
  segments = ProtoField.uint32("rokoko.segments", "Segments"),
  lz4_size = ProtoField.uint64("rokoko.lz4.content_size", "LZ4 content size"),
}
rokoko.fields = {}
for _, v in pairs(f) do table.insert(rokoko.fields, v) end

local e_malformed = ProtoExpert.new("rokoko.malformed", "Not a Rokoko Studio datagram",
  expert.group.MALFORMED, expert.severity.ERROR)
rokoko.experts = { e_malformed }

local json = Dissector.get("json")
local LZ4_MAGIC = "\x04\x22\x4d\x18"

-- The number after "key": in text, or nil.
local function number(text, key)
  return tonumber(text:match('"' .. key .. '"%s*:%s*(%-?[%d%.eE%+%-]+)') or "")
end

-- Whether text is one whole JSON object: its outer brace closes at its end
-- (brackets counted outside strings), so a cut datagram is not taken for one.
local function whole(text)
  local depth, in_string, escaped, closed_at = 0, false, false, nil
  for i = 1, #text do
    local c = text:sub(i, i)
    if in_string then
      if escaped then escaped = false
      elseif c == "\\" then escaped = true
      elseif c == '"' then in_string = false end
    elseif c == '"' then in_string = true
    elseif c == "{" or c == "[" then depth = depth + 1
    elseif c == "}" or c == "]" then
      depth = depth - 1
      if depth < 0 then return false end
      if depth == 0 then closed_at = i end
    elseif closed_at and not c:find("%s") then
      return false
    end
  end
  return closed_at ~= nil and depth == 0 and not in_string
end

-- Each actor of "actors" by its name, with the segments of its "body":
-- the keys whose value starts with a "position".
local function actors(text, root)
  local list = text:match('"actors"%s*:%s*(%b[])') or ""
  local names = {}
  for at, name in list:gmatch('()"name"%s*:%s*"([^"\\]*)"') do
    table.insert(names, { at = at, name = name })
  end
  for i, a in ipairs(names) do
    local stop = names[i + 1] and names[i + 1].at or #list
    local part = list:sub(a.at, stop)
    local body = part:match('"body"%s*:%s*(%b{})') or ""
    local n = 0
    for _ in body:gmatch('"[%w_]+"%s*:%s*{%s*"position"') do n = n + 1 end
    local t = root:add(f.actor, a.name)
    t:add(f.segments, n)
  end
  return #names
end

local function dissect(buf, pinfo, root)
  local len = buf:len()
  if len >= 4 and buf(0, 4):raw() == LZ4_MAGIC then
    root:add(f.kind, "lz4")
    -- FLG bit 3: an 8-byte little-endian content size after FLG and BD.
    if len >= 14 and bit.band(buf(4, 1):uint(), 0x08) ~= 0 then
      root:add(f.lz4_size, buf(6, 8):le_uint64())
    end
    pinfo.cols.info = string.format("LZ4 frame, %d bytes", len)
    return
  end
  local text = buf():string()
  local why
  if not whole(text) then
    why = "JSON that ends early"
  elseif not text:find('"scene"%s*:%s*{') then
    why = "an object without a scene"
  end
  if why then
    root:add(f.kind, "malformed")
    root:add_proto_expert_info(e_malformed, why)
    pinfo.cols.info = "malformed: " .. why
    return
  end
  root:add(f.kind, "frame")
  local version, fps, ts = number(text, "version"), number(text, "fps"), number(text, "timestamp")
  if version then root:add(f.version, version) end
  if fps then root:add(f.fps, fps) end
  if ts then root:add(f.timestamp, ts) end
  local n = actors(text, root)
  pinfo.cols.info = string.format("frame t=%s actors=%d", ts and tostring(ts) or "?", n)
end

function rokoko.dissector(buf, pinfo, tree)
  pinfo.cols.protocol = "Rokoko"
  local root = tree:add(rokoko, buf(), "Rokoko Studio Live")
  local ok, err = pcall(dissect, buf, pinfo, root)
  if not ok then
    -- A bug in this script: say so in the tree rather than as a Lua error.
    root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(err))
  end
  if json and buf:len() > 0 and buf(0, 1):uint() == 0x7b then
    pcall(function() json:call(buf, pinfo, tree) end)
  end
  return buf:len()
end

-- Studio's default port, and by content on any port: an LZ4 frame, or a
-- JSON object naming a scene early.
DissectorTable.get("udp.port"):add(14043, rokoko)
local function heuristic(buf, pinfo, tree)
  if buf:len() < 4 then return false end
  if buf(0, 4):raw() ~= LZ4_MAGIC then
    if buf(0, 1):uint() ~= 0x7b then return false end
    local head = buf(0, math.min(buf:len(), 512)):string()
    if not (head:find('"scene"') and head:find('"actors"')) then return false end
  end
  rokoko.dissector(buf, pinfo, tree)
  return true
end
rokoko:register_heuristic("udp", heuristic)
