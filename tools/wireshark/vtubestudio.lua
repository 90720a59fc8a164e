-- VTube Studio's phone tracking (the app's "3rd Party PC Clients") for
-- Wireshark and tshark.
--
-- Both directions are one JSON object per UDP datagram. A PC asks the phone
-- (UDP 21412) with {"messageType":"iOSTrackingDataRequest","time":T,
-- "sentBy":NAME,"ports":[...]}; the phone answers on the ports listed, one
-- datagram per frame: Timestamp (Unix ms), Hotkey, FaceFound, Rotation,
-- Position, BlendShapes ([{"k":name,"v":value}]), EyeLeft, EyeRight. This
-- script names the members mocap-tools decodes (the app writes them in one
-- layout: compact, in that order, strings without escapes) and hands the
-- whole text to Wireshark's JSON dissector for the rest. The data has no
-- port of its own: it is found by content on any UDP port. It never raises
-- a Lua error.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local vts = Proto("vtubestudio", "VTube Studio phone tracking")

local f = {
  kind = ProtoField.string("vtubestudio.kind", "Datagram kind"),
  sent_by = ProtoField.string("vtubestudio.sent_by", "Sent by"),
  time = ProtoField.double("vtubestudio.time", "Send for (s)"),
  port = ProtoField.uint16("vtubestudio.port", "Port to send to"),
  timestamp = ProtoField.int64("vtubestudio.timestamp", "Timestamp (Unix ms)"),
  hotkey = ProtoField.int32("vtubestudio.hotkey", "Hotkey"),
  face_found = ProtoField.bool("vtubestudio.face_found", "Face found"),
  blendshape_name = ProtoField.string("vtubestudio.blendshape.name", "Blendshape"),
  blendshape_value = ProtoField.double("vtubestudio.blendshape.value", "Value"),
}
vts.fields = {}
for _, v in pairs(f) do table.insert(vts.fields, v) end

local e_malformed = ProtoExpert.new("vtubestudio.malformed", "Not a VTube Studio datagram",
  expert.group.MALFORMED, expert.severity.ERROR)
vts.experts = { e_malformed }

local json = Dissector.get("json")

-- The number after "key": in text, as text, or nil.
local function number(text, key)
  return text:match('"' .. key .. '"%s*:%s*(%-?[%d%.eE%+%-]+)')
end

-- Whether text is one whole object: its outer braces close at its end
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

local function dissect(buf, pinfo, root)
  local text = buf():string()
  local complete = whole(text)
  if text:find('"messageType"%s*:%s*"iOSTrackingDataRequest"') and complete then
    root:add(f.kind, "request")
    local sent_by = text:match('"sentBy"%s*:%s*"([^"\\]*)"')
    local time = tonumber(number(text, "time") or "")
    if sent_by then root:add(f.sent_by, sent_by) end
    if time then root:add(f.time, time) end
    local list = text:match('"ports"%s*:%s*%[([^%]]*)%]') or ""
    local ports = {}
    for p in list:gmatch("[^,%s]+") do
      local n = tonumber(p)
      if n and n >= 1 and n <= 65535 and n == math.floor(n) then
        root:add(f.port, n)
        table.insert(ports, p)
      end
    end
    pinfo.cols.info = string.format('request "%s" time=%s ports=%s', sent_by or "?",
      time and tostring(time) or "?", table.concat(ports, ","))
    return
  end
  local why
  if not complete then
    why = "JSON that ends early"
  elseif not (text:find('"FaceFound"') or text:find('"BlendShapes"') or text:find('"Timestamp"')) then
    why = "neither a request nor tracking data"
  end
  if why then
    root:add(f.kind, "malformed")
    root:add_proto_expert_info(e_malformed, why)
    pinfo.cols.info = "malformed: " .. why
    return
  end
  root:add(f.kind, "data")
  local ts = text:match('"Timestamp"%s*:%s*(%-?%d+)[,}%s]')
  if ts then root:add(f.timestamp, Int64(ts)) end
  local hotkey = tonumber(number(text, "Hotkey") or "")
  if hotkey then root:add(f.hotkey, hotkey) end
  local found = text:match('"FaceFound"%s*:%s*(%a+)')
  if found == "true" or found == "false" then root:add(f.face_found, found == "true") end
  local shapes = text:match('"BlendShapes"%s*:%s*%[(.-)%]') or ""
  local n = 0
  for name, value in shapes:gmatch('{%s*"k"%s*:%s*"([^"\\]*)"%s*,%s*"v"%s*:%s*(%-?[%d%.eE%+%-]+)%s*}') do
    local v = tonumber(value)
    if v then
      root:add(f.blendshape_name, name)
      root:add(f.blendshape_value, v)
      n = n + 1
    end
  end
  pinfo.cols.info = string.format("data t=%s %s blendshapes=%d", ts or "?",
    found == "false" and "no face" or "face", n)
end

function vts.dissector(buf, pinfo, tree)
  pinfo.cols.protocol = "VTubeStudio"
  local root = tree:add(vts, buf(), "VTube Studio")
  local ok, err = pcall(dissect, buf, pinfo, root)
  if not ok then
    -- A bug in this script: say so in the tree rather than as a Lua error.
    root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(err))
  end
  if json then pcall(function() json:call(buf, pinfo, tree) end) end
  return buf:len()
end

-- The phone's request port, and the data found by content on any port: a
-- JSON object naming the request or a member of the tracking data early.
DissectorTable.get("udp.port"):add(21412, vts)
local function heuristic(buf, pinfo, tree)
  if buf:len() < 2 or buf(0, 1):uint() ~= 0x7b then return false end
  local head = buf(0, math.min(buf:len(), 256)):string()
  if not (head:find('"iOSTrackingDataRequest"') or head:find('"FaceFound"')
      or head:find('"BlendShapes"') or head:find('"Timestamp"')) then
    return false
  end
  vts.dissector(buf, pinfo, tree)
  return true
end
vts:register_heuristic("udp", heuristic)
