-- VS Code's global state database (trimmed). agentdex reads only the
-- 'inline-chat-history' key; the secret:// row is here to show it is never read.
CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
INSERT INTO ItemTable VALUES ('workbench.panel.chat', '{"numberOfVisibleViews":1}');
INSERT INTO ItemTable VALUES ('secret://{"extensionId":"github.copilot-chat","key":"session"}', 'sample-placeholder-never-read');
INSERT INTO ItemTable VALUES ('inline-chat-history', '["extract the price formatting into formatMoney()","add aria-labels to the payment inputs","convert this callback to async/await"]');
