-- SlimeVR's tracker protocol (IMU trackers and the SlimeVR server, UDP 6969
-- both ends) for Wireshark and tshark.
--
-- Big-endian. A packet: i32 type, i64 packet number, the type's fields;
-- a bundle (type 100) holds packets each behind a u16 length, without a
-- number (type 101: u8 length and u8 type). The server's handshake answer
-- is the byte 3 and a greeting ("Hey OVR =D 5"), its sensor
-- acknowledgement type 15 and two bytes, neither with a number. Fields are
-- named as mocap-tools' decoder (mocap_core::slimevr) names them; what
-- cannot be decoded, and odd values, carry its reason and offset. It never
-- raises a Lua error: every read is checked against the buffer.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local slimevr = Proto("slimevr", "SlimeVR")

local f = {
  kind = ProtoField.string("slimevr.kind", "Packet"),
  type = ProtoField.uint32("slimevr.type", "Type"),
  number = ProtoField.uint64("slimevr.number", "Packet number"),
  length = ProtoField.uint16("slimevr.length", "Length in bundle"),
  sensor = ProtoField.uint8("slimevr.sensor", "Sensor"),
  data_type = ProtoField.uint8("slimevr.data_type", "Data type"),
  -- float32 on the wire, shown as doubles so tshark prints all its digits.
  qx = ProtoField.double("slimevr.quat.x", "Quaternion x"),
  qy = ProtoField.double("slimevr.quat.y", "Quaternion y"),
  qz = ProtoField.double("slimevr.quat.z", "Quaternion z"),
  qw = ProtoField.double("slimevr.quat.w", "Quaternion w"),
  accuracy = ProtoField.uint8("slimevr.accuracy", "Accuracy"),
  value = ProtoField.double("slimevr.value", "Value"),
  int = ProtoField.int32("slimevr.int", "Value"),
  board = ProtoField.int32("slimevr.board", "Board"),
  imu = ProtoField.int32("slimevr.imu", "IMU"),
  mcu = ProtoField.int32("slimevr.mcu", "MCU"),
  build = ProtoField.int32("slimevr.build", "Firmware build"),
  firmware = ProtoField.string("slimevr.firmware", "Firmware"),
  mac = ProtoField.ether("slimevr.mac", "MAC"),
  text = ProtoField.string("slimevr.text", "Text"),
  volts = ProtoField.double("slimevr.battery.volts", "Battery volts"),
  level = ProtoField.double("slimevr.battery.level", "Battery level (0-1)"),
  rssi = ProtoField.int8("slimevr.rssi", "Signal (dBm)"),
  temperature = ProtoField.double("slimevr.temperature", "Temperature (C)"),
  ping = ProtoField.int32("slimevr.ping", "Ping id"),
  status = ProtoField.uint8("slimevr.status", "Sensor status"),
  flags = ProtoField.bytes("slimevr.flags", "Feature flags"),
  greeting = ProtoField.string("slimevr.greeting", "Greeting"),
  body = ProtoField.bytes("slimevr.body", "Bytes"),
}
slimevr.fields = {}
for _, v in pairs(f) do table.insert(slimevr.fields, v) end

local e_malformed = ProtoExpert.new("slimevr.malformed", "Malformed SlimeVR datagram",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_odd = ProtoExpert.new("slimevr.odd", "Odd value (decoded all the same)",
  expert.group.PROTOCOL, expert.severity.WARN)
slimevr.experts = { e_malformed, e_odd }

local prefs = slimevr.prefs
prefs.port = Pref.uint("UDP port", 6969, "UDP port of the server (and the trackers)")

local function at(reason, offset, field)
  return string.format("%s at offset %d in `%s`", reason, offset, field)
end

-- A cursor over buf[o, stop): reads raise {malformed = text} when cut, as
-- mocap_core::wire::Cursor refuses with the field's offset.
local function cursor(buf, o, stop) return { buf = buf, o = o, stop = stop } end

local function take(c, n, field)
  local have = c.stop - c.o
  if have < n then
    error({ malformed = at(string.format("truncated: need %d bytes, have %d", n, have), c.o, field) })
  end
  local o = c.o
  c.o = c.o + n
  return o
end

local function rest(c)
  local o, n = c.o, c.stop - c.o
  c.o = c.stop
  return o, n
end

local function u8(c, t, field, pf)
  local o = take(c, 1, field)
  if pf then t:add(pf, c.buf(o, 1)) end
  return c.buf(o, 1):uint()
end

local function i32(c, t, field, pf)
  local o = take(c, 4, field)
  if pf then t:add(pf, c.buf(o, 4)) end
  return c.buf(o, 4):int()
end

local function f32(c, t, field, pf)
  local o = take(c, 4, field)
  local v = c.buf(o, 4):float()
  if pf then t:add(pf, c.buf(o, 4), v) end
  return v
end

local function quat(c, t, field)
  f32(c, t, field, f.qx); f32(c, t, field, f.qy)
  f32(c, t, field, f.qz); f32(c, t, field, f.qw)
end

local function short_string(c, t, field, pf)
  local n = u8(c, t, field)
  local o = take(c, n, field)
  if pf then
    if n > 0 then t:add(pf, c.buf(o, n)) else t:add(pf, "") end
  end
end

-- Reads `read` when bytes are left (an optional field, as the server reads it).
local function optional(c, read)
  if c.o < c.stop then read() end
end

-- A packet's fields after its header (c over exactly its bytes): its name.
local body

local NAMES = {
  [0] = "heartbeat", [3] = "handshake", [4] = "acceleration", [10] = "ping",
  [11] = "serial", [12] = "battery", [13] = "tap", [14] = "sensor error",
  [15] = "sensor info", [17] = "rotation", [18] = "magnetometer accuracy",
  [19] = "signal", [20] = "temperature", [21] = "user action", [22] = "feature flags",
  [23] = "rotation and acceleration", [24] = "config ack", [25] = "set config flag",
  [26] = "flex", [27] = "position", [100] = "bundle", [101] = "bundle",
  [105] = "inspection", [200] = "protocol change",
}

local function item(c, t, compact, odd)
  while c.o < c.stop do
    local lo = c.o
    local n
    if compact then
      n = u8(c, t, "length")
    else
      local o = take(c, 2, "length")
      n = c.buf(o, 2):uint()
    end
    if n == 0 then
      table.insert(odd, at("empty packet in a bundle", lo, "length"))
    else
      local o = take(c, n, "bundle")
      local inner = cursor(c.buf, o, o + n)
      local kind
      if compact then
        kind = u8(inner, t, "type")
      else
        kind = c.buf(take(inner, 4, "type"), 4):uint()
      end
      local node = t:add(slimevr, c.buf(lo, o + n - lo), "Packet")
      node:add(f.length, c.buf(lo, compact and 1 or 2), n)
      node:add(f.type, kind)
      local name = body(kind, inner, node, true, odd)
      node:set_text(name)
      return name
    end
  end
  return nil
end

body = function(kind, c, t, in_bundle, odd)
  local name = NAMES[kind] or "unknown"
  if kind == 0 then
  elseif kind == 1 and c.o == c.stop then
    name = "heartbeat"
  elseif kind == 1 or kind == 16 then
    name = "rotation"
    t:add(f.sensor, kind == 16 and 1 or 0)
    quat(c, t, name)
  elseif kind == 3 and not in_bundle then
    optional(c, function() i32(c, t, name, f.board) end)
    optional(c, function() i32(c, t, name, f.imu) end)
    optional(c, function() i32(c, t, name, f.mcu) end)
    optional(c, function() i32(c, t, name); i32(c, t, name); i32(c, t, name) end)
    optional(c, function() i32(c, t, name, f.build) end)
    optional(c, function() short_string(c, t, name, f.firmware) end)
    optional(c, function() t:add(f.mac, c.buf(take(c, 6, name), 6)) end)
    optional(c, function() u8(c, t, name, f.int) end)
    for _ = 1, 5 do
      optional(c, function() short_string(c, t, name, f.text) end)
    end
  elseif kind == 4 then
    f32(c, t, name, f.value); f32(c, t, name, f.value); f32(c, t, name, f.value)
    optional(c, function() u8(c, t, name, f.sensor) end)
  elseif kind == 10 then
    i32(c, t, name, f.ping)
  elseif kind == 11 then
    local n = c.buf(take(c, 4, name), 4):uint()
    local o = take(c, n, name)
    if n > 0 then t:add(f.text, c.buf(o, n)) end
  elseif kind == 12 then
    local first_at = c.o
    local first = f32(c, t, name)
    local level, level_at = first, first_at
    if c.o < c.stop then
      level_at = c.o
      level = f32(c, t, name)
      t:add(f.volts, c.buf(first_at, 4), first)
      t:add(f.level, c.buf(level_at, 4), level)
    else
      t:add(f.level, c.buf(first_at, 4), first)
    end
    if not (level >= 0 and level <= 1) then
      table.insert(odd, at("battery level is not a fraction from 0 to 1", level_at, name))
    end
  elseif kind == 13 or kind == 14 then
    u8(c, t, name, f.sensor); u8(c, t, name, f.int)
  elseif kind == 15 then
    u8(c, t, name, f.sensor); u8(c, t, name, f.status)
    optional(c, function() u8(c, t, name, f.imu) end)
    optional(c, function() take(c, 2, name) end)
    optional(c, function() u8(c, t, name) end)
    optional(c, function() u8(c, t, name) end)
    optional(c, function() u8(c, t, name, f.data_type) end)
    optional(c, function() f32(c, t, name); f32(c, t, name) end)
  elseif kind == 17 then
    u8(c, t, name, f.sensor); u8(c, t, name, f.data_type)
    quat(c, t, name)
    u8(c, t, name, f.accuracy)
  elseif kind == 18 or kind == 26 then
    u8(c, t, name, f.sensor); f32(c, t, name, f.value)
  elseif kind == 19 then
    u8(c, t, name, f.sensor)
    local o = take(c, 1, name)
    t:add(f.rssi, c.buf(o, 1))
  elseif kind == 20 then
    u8(c, t, name, f.sensor); f32(c, t, name, f.temperature)
  elseif kind == 21 then
    u8(c, t, name, f.int)
  elseif kind == 22 then
    local o, n = rest(c)
    if n > 0 then t:add(f.flags, c.buf(o, n)) end
  elseif kind == 23 then
    u8(c, t, name, f.sensor)
    for k = 1, 7 do
      local o = take(c, 2, name)
      if k <= 4 then
        t:add(({ f.qx, f.qy, f.qz, f.qw })[k], c.buf(o, 2), c.buf(o, 2):int() / 32768)
      end
    end
  elseif kind == 24 then
    u8(c, t, name, f.sensor); take(c, 2, name)
  elseif kind == 25 then
    u8(c, t, name, f.sensor); take(c, 2, name); u8(c, t, name, f.int)
  elseif kind == 27 then
    u8(c, t, name, f.sensor)
    f32(c, t, name, f.value); f32(c, t, name, f.value); f32(c, t, name, f.value)
  elseif (kind == 100 or kind == 101) and not in_bundle then
    while item(c, t, kind == 101, odd) do end
  elseif kind == 200 then
    u8(c, t, name, f.int); u8(c, t, name, f.int)
  elseif kind == 105 then
    rest(c)
  else
    name = "unknown"
    local o, n = rest(c)
    if n > 0 then t:add(f.body, c.buf(o, n)) end
  end
  if c.o < c.stop then
    table.insert(odd, at(string.format("%d bytes after the last field", c.stop - c.o), c.o, name))
  end
  return name
end

local function dissect(buf, pinfo, root)
  local len = buf:len()
  local odd = {}
  local ok, err = pcall(function()
    if len == 0 then error({ malformed = at("empty datagram", 0, "type") }) end
    if buf(0, 1):uint() == 3 then
      -- The server's handshake answer: the type in one byte, then text.
      local n = 0
      while 1 + n < len and buf(1 + n, 1):uint() ~= 0 do n = n + 1 end
      root:add(f.kind, "handshake answer")
      if n > 0 then root:add(f.greeting, buf(1, n)) end
      pinfo.cols.info = "handshake answer"
      return
    end
    local c = cursor(buf, 0, len)
    local kind = buf(take(c, 4, "type"), 4):uint()
    root:add(f.type, buf(0, 4))
    if kind == 15 and len < 12 then
      local sensor = u8(c, root, "sensor ack", f.sensor)
      u8(c, root, "sensor ack", f.status)
      root:add(f.kind, "sensor ack")
      if c.o < c.stop then
        table.insert(odd, at(string.format("%d bytes after the last field", c.stop - c.o), c.o, "sensor ack"))
      end
      pinfo.cols.info = string.format("sensor ack sensor=%d", sensor)
      return
    end
    local no = take(c, 8, "number")
    root:add(f.number, buf(no, 8))
    local name = body(kind, c, root, false, odd)
    root:add(f.kind, name)
    pinfo.cols.info = string.format("%s number=%s", name, tostring(buf(no, 8):uint64()))
  end)
  if not ok then
    if type(err) == "table" and err.malformed then
      root:add(f.kind, "malformed")
      root:add_proto_expert_info(e_malformed, err.malformed)
      pinfo.cols.info = "malformed: " .. err.malformed
    else
      -- A bug in this script: say so in the tree rather than as a Lua error.
      root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(err))
    end
    return
  end
  for _, w in ipairs(odd) do root:add_proto_expert_info(e_odd, w) end
end

function slimevr.dissector(buf, pinfo, tree)
  pinfo.cols.protocol = "SlimeVR"
  local root = tree:add(slimevr, buf(), "SlimeVR")
  dissect(buf, pinfo, root)
  return buf:len()
end

-- Registered at load (so "Decode As" and tshark -d know it), and again
-- when the port preference changes.
local registered = 6969
DissectorTable.get("udp.port"):add(registered, slimevr)
function slimevr.init()
  local udp = DissectorTable.get("udp.port")
  if registered ~= prefs.port then
    udp:remove(registered, slimevr)
    registered = prefs.port
    udp:add(registered, slimevr)
  end
end
