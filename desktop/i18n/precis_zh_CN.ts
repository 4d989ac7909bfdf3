<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Activity</name>
    <message>
        <source>Sending…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the reply…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Receiving the reply…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compressing context…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context too long: compressing and resending…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preparing a summary in the background…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running tools…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>BreakdownBar</name>
    <message>
        <source>System prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tools</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pinned instructions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Messages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool results</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Media</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Free</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reserved for output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: {tokens} tokens ({exact}), {share}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Bridge</name>
    <message>
        <source>Something went wrong: {name}: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot attach: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported {n} server(s): {names}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing new to import</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatDelegate</name>
    <message>
        <source>shortened in the context sent to the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Older tool output or media in this message is sent to the model in a shortened form to save context. The full text stays here and in the history.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hide summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>View summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hide originals</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show originals</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut off: the context window is full</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut off: output limit reached</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The reply was stopped before it finished; what arrived is kept.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatModel</name>
    <message>
        <source>You</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summary card</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notice</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error: {detail}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Still being written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut off: Continue resumes it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shortened in the context sent to the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error: </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>+{n} lines</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} images</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1 image</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting for your permission</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✖ error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no output)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>({n} images or documents)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking (redacted)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[image]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attachment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[document: {title}]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context compacted · {count} messages summarized · ~{saved} tokens saved</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <source>Start a conversation — Enter sends, Shift+Enter adds a line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Messages, oldest first. Ctrl+C copies the current message; the menu key shows its actions.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy code block {n}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy link address</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue the reply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit and resend…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete message…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Message Claude — Enter sends, Shift+Enter adds a line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter adds a line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach images or PDFs (or drop / paste them here)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove the attachments</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Leave the edit; nothing is changed (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the reply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the reply; what has arrived is kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> and {n} more</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attached: {names}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Images and PDFs ({p})</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ContextGauge</name>
    <message>
        <source>Context usage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No context usage data yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{used} tokens used; capacity unknown.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{used} of {window} tokens used ({pct}). Next turn about {nxt} ({npct}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context is getting full.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context almost full.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summary active.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Engine</name>
    <message>
        <source>API key (x-api-key header)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bearer token (Authorization header)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No key (a local server)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ErrorBanner</name>
    <message>
        <source>Retry</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compact and retry</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New chat from summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HoverCard</name>
    <message>
        <source>Context details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Usage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next turn (est.)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cache read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cache creation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost, last turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost, session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context breakdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compact now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>capacity unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Active · 1 compaction</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Active · {n} compactions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Active</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Auto-compaction paused after 3 failures</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context is getting full: Précis will compact soon</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context almost full: the next turn will be compacted first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From the last API response</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Estimated (no comparable API response yet)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No context usage data yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summarise older messages now to free up context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing to compact yet</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LanguageBox</name>
    <message>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Applies at the next start</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>The model this chat uses (stored with the chat)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model of this chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Import Claude Code session…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Rename chat…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Clear history of this chat…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Editing a message: sending replaces it and every message after it. Esc cancels.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Editing: sending replaces the message and what follows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete this message?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Clear history</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete every message and summary of this chat? The chat itself stays.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import Claude Code session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Claude Code sessions (*.jsonl);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importing %s…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import failed: %s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model can change when the reply has finished.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This chat now uses %s.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%s · %s tokens</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Markdown</name>
    <message>
        <source>[image: {alt}]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>code</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>McpDialog</name>
    <message>
        <source>MCP servers and tool permissions</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>McpPage</name>
    <message>
        <source>disabled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>starting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} tools: {names}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP servers (check to enable)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Restart</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re&amp;fresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Import from Claude Desktop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Server log (stderr)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re&amp;voke</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Servers come from mcp.json in the config folder ({&quot;mcpServers&quot;: …}), or from Claude Desktop&apos;s configuration. Check a server to enable it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;MCP servers&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Log of the selected server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Saved approvals&lt;/b&gt; (&quot;Always for this tool&quot;)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>built-in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{tool}  ({server}, origin {origin})</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PermissionPrompt</name>
    <message>
        <source>Arguments of the tool call</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Allow &amp;once</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Allow for this &amp;chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Always for this tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Deny</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;{tool}&lt;/b&gt; ({server}) wants to run. Allow it?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no diff: the file cannot be read or the text is not in it)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProviderForm</name>
    <message>
        <source>Provider profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>used for summaries; empty = the chat model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from the provider or the catalog</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> / M tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from the catalog</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep the prompt cache for an hour (turn off if the provider rejects it)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>set by ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>saved in the system keyring (type to replace)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kept for this run only (type to replace)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use the key for this run only (not saved)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send one tiny request and report the models, the window and the key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Authentication</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Small model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max output tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prices (in, out)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set by %s for this run; not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%s overrides this profile for this run only; it is never saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%s override this profile for this run only; they are never saved.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings · Provider profiles</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by title</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chats</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>F2 renames the open chat (anywhere in the window); Delete on this list deletes the selected one</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter chats by title</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} messages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Title:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete “{title}” and all its messages? This cannot be undone.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ToolsUi</name>
    <message>
        <source>&amp;MCP servers and tool permissions…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workspace folder</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>WelcomePage</name>
    <message>
        <source>&lt;h2&gt;Welcome to Précis&lt;/h2&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Précis talks to Claude through the Anthropic API or any Anthropic-compatible provider.&lt;br&gt;1. Paste an API key (from console.anthropic.com, or your provider).&lt;br&gt;2. Pick your provider&apos;s profile (Anthropic, OpenRouter, DeepSeek, a local server…); Test connection checks it.&lt;br&gt;3. Pick a model. You can change all of this later in Settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start chatting</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>WorkspaceButton</name>
    <message>
        <source>Choose workspace folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No workspace (no built-in tools)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workspace: {name}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No workspace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pick a folder so the model can read, search, edit and run commands in it (each call asks first).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
